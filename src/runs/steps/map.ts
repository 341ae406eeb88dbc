import { mapWork } from '../nodes/composite.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const mapStep: NodeStep<NodeOf<'map'>> = {
  // The list is the value of its one edge in (the graph rules ask for exactly one).
  work: async (run, node, _input, before) => ({
    value: await mapWork(run.composite, node, before.length === 1 ? before[0]!.value : undefined),
    usage: null,
  }),
};
