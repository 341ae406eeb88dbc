import type { NodeOf, NodeStep } from '../runState.ts';

export const templateStep: NodeStep<NodeOf<'template'>> = {
  input: (run, node) => run.render(node.config.template),
  work: async (_run, _node, input) => ({ value: input, usage: null }),
};
