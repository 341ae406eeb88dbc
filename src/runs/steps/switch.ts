import { chooseCase } from '../branching.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const switchStep: NodeStep<NodeOf<'switch'>> = {
  // The upstream value goes on down the chosen case's edges, not the verdict.
  work: async (run, node, _input, before) => ({
    value: before[0]?.value ?? '',
    usage: null,
    route: await chooseCase(run.budget, node, run.scope, before, run.signal),
  }),
  // Pure: chosen again.
  async resume(run, node, out, before) {
    out.route = await chooseCase(run.budget, node, run.scope, before, run.signal);
  },
};
