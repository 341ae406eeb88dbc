import { answerSchemaOf } from '../../nodes/approval/answers.ts';
import { RunFailure } from '../../shared/errors.ts';
import { AwaitingAnswer } from '../awaitingAnswer.ts';
import type { NodeOf, NodeStep } from '../runState.ts';

export const approvalStep: NodeStep<NodeOf<'approval'>> = {
  // Logged as the step's input: what the reviewer is asked.
  input: (run, node) => run.render(node.config.message),
  async work(run, node, input) {
    if (!run.approvals)
      throw new RunFailure(
        'approval_unavailable',
        'An approval node waits only in a run of the workflow it belongs to: not in a called workflow, nor in a node test (pin its answer as the upstream of the nodes after it).',
        node.id,
      );
    const state = await run.approvals(node.id);
    if (state && 'answer' in state) return { value: state.answer, usage: null };
    if (state) throw new RunFailure('approval_timeout', `No answer came within ${state.waitedSeconds} s.`, node.id);
    throw new AwaitingAnswer(node.id, input, answerSchemaOf(node.config), node.config.timeout_seconds);
  },
};
