// A run's pause at its approval nodes: the attempt that reached them stores the run `waiting`,
// each node's approval with the hash of its link's random token, and the `node.waiting` events
// that carry the links, in one transaction; then its job ends. The answer (approvals.ts) or the
// timeout (the sweep) queues the run again, and the next attempt resumes after its finished steps.
import { hashToken, newToken } from '../shared/crypto.ts';
import type { Attempt } from './attempt.ts';
import type { AwaitingAnswer } from './awaitingAnswer.ts';
import type { Knex } from 'knex';
import type { ApprovalLookup } from './awaitingAnswer.ts';
import { findApproval, pauseRun } from './approvalsStore.ts';
import type { AppContext } from '../context.ts';

/** The link a person answers through (a page with the message and a form). */
export const approvalPath = (token: string) => `/approvals/${token}`;

/** Stores the run waiting at `waits`; false when the attempt no longer holds the run (cancelled meanwhile). */
export async function pauseAttempt(
  ctx: Pick<AppContext, 'db' | 'config' | 'now'>,
  attempt: Attempt,
  waits: readonly AwaitingAnswer[],
): Promise<boolean> {
  const left = await attempt.closeForPause();
  if (!left) return false;
  const now = ctx.now();
  const { id: runId, workflow_id: workflowId } = attempt.run;
  const max = ctx.config.APPROVAL_MAX_WAIT_SECONDS;
  const approvals = waits.map((wait) => {
    const token = newToken('apv');
    const expiresAt = now + Math.min(wait.timeoutSeconds ?? max, max) * 1000;
    return {
      row: {
        run_id: runId,
        node_id: wait.nodeId,
        token_hash: hashToken(token),
        message: wait.prompt,
        answer_schema: JSON.stringify(wait.answerSchema),
        created_at: now,
        expires_at: expiresAt,
      },
      events: [
        {
          type: 'node.waiting' as const,
          data: {
            node_id: wait.nodeId,
            message: wait.prompt,
            answer_schema: wait.answerSchema,
            expires_at: new Date(expiresAt).toISOString(),
            resume_url: `${ctx.config.BASE_URL}/api/workflows/${workflowId}/runs/${runId}/resume`,
            approval_url: `${ctx.config.BASE_URL}${approvalPath(token)}`,
          },
        },
      ],
    };
  });
  const events = [...left.events, { type: 'run.status' as const, data: { status: 'waiting' } }];
  return pauseRun(ctx.db, { runId, attempt: attempt.attempt, now, steps: left.steps, events, approvals });
}

/** What an approval node of the run learns of its answer: given, timed out, or not yet. */
export const approvalLookup =
  (db: Knex, runId: string): ApprovalLookup =>
  async (nodeId) => {
    const row = await findApproval(db, runId, nodeId);
    if (!row || row.state === 'waiting') return undefined;
    if (row.state === 'answered') return { answer: JSON.parse(row.answer ?? '{}') as Record<string, unknown> };
    return { timedOut: true, waitedSeconds: Math.round((Number(row.expires_at) - Number(row.created_at)) / 1000) };
  };
