// The nodes that make lists and run graphs of their own (nodes/composite.ts does their work).
import { compositeWork, prepareCall, splitSource } from '../nodes/composite.ts';
import type { Produced } from '../values.ts';
import type { NodeOf, NodeStep, RunState, StepDone } from '../runState.ts';

type Composite = NodeOf<'split'> | NodeOf<'map'> | NodeOf<'workflow'>;

/** `upstream`: the value of its one edge in, if it has exactly one. */
const work = async (run: RunState, node: Composite, input: string, before: Produced[]): Promise<StepDone> => ({
  value: await compositeWork(run.composite, node, input, before.length === 1 ? before[0]!.value : undefined),
  usage: null,
});

export const splitStep: NodeStep<NodeOf<'split'>> = {
  input: (run, node, before) => splitSource(node, before.map((p) => p.text).join('\n\n'), run.render),
  work,
};

export const mapStep: NodeStep<NodeOf<'map'>> = { work };

export const workflowStep: NodeStep<NodeOf<'workflow'>> = {
  input: (run, node, before) => prepareCall(run.composite, node, before),
  work,
};
