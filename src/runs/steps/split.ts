import { splitSource, splitWork } from '../nodes/composite.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const splitStep: NodeStep<NodeOf<'split'>> = {
  // Its `text` template rendered, else its upstream texts joined.
  input: (run, node, before) => splitSource(node, before.map((p) => p.text).join('\n\n'), run.render),
  work: async (run, node, input) => ({ value: await splitWork(run.composite, node, input), usage: null }),
};
