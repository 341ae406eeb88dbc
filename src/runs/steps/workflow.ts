import { prepareCall, workflowWork } from '../nodes/composite.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const workflowStep: NodeStep<NodeOf<'workflow'>> = {
  // The called workflow's run inputs, logged; its graph is kept for the work.
  input: (run, node, before) => prepareCall(run.composite, node, before),
  work: async (run, node) => ({ value: await workflowWork(run.composite, node), usage: null }),
};
