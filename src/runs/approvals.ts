// Answering a waiting run's approval node: through the API (resumeRun, the run's owner) or through
// the node's single-use link (a page for a person without an API key: the token is the credential).
// Either way the answer is checked against the node's answer_schema, and settleApproval takes it
// only while the approval waits: of two answers sent at once, one wins, the other is a 409.
import type { AnswerSchema } from '../nodes/approval/answers.ts';
import { answerProblems } from '../nodes/approval/answers.ts';
import { hashToken } from '../shared/crypto.ts';
import { invalidApprovalAnswer, runNotWaiting, type ProblemItem } from '../shared/errors.ts';
import { findApprovalByTokenHash, findWaitingApproval, settleApproval, type ApprovalRow } from './approvalsStore.ts';
import { runOf, toRun, type Run, type RunContext } from './service.ts';
import * as store from './store.ts';

/** The answer's problems against the approval's schema, pointed under `prefix`. */
export const answerProblemsOf = (
  approval: ApprovalRow,
  answer: Record<string, unknown>,
  prefix: string,
): ProblemItem[] => answerProblems(JSON.parse(approval.answer_schema) as AnswerSchema, answer, prefix);

/** Takes the answer and queues the run again; 409 when the approval no longer waits. */
async function settle(ctx: RunContext, approval: ApprovalRow, answer: Record<string, unknown>): Promise<void> {
  if (!(await settleApproval(ctx.db, approval, { state: 'answered', answer: JSON.stringify(answer) }, ctx.now()))) {
    const current = await store.findRun(ctx.db, approval.run_id);
    throw runNotWaiting(approval.run_id, current?.status ?? 'gone');
  }
  await requeue(ctx, approval.run_id);
}

/** The run's job again; a lost enqueue is made good by the sweep, which enqueues any run left queued. */
export async function requeue(ctx: Pick<RunContext, 'db' | 'runs' | 'logger'>, runId: string): Promise<void> {
  const run = await store.findRun(ctx.db, runId);
  if (!run || !ctx.runs) return;
  // The resumed run continues this request's trace, linked to its first span (long ended).
  const link = run.trace_context ? { traceparent: run.trace_context, reason: 'resumed' as const } : undefined;
  await ctx.runs.queue
    .enqueue(run.id, String(run.user_id), link)
    .catch((err: unknown) => ctx.logger.warn({ err, runId }, 'run queue write failed; the sweep queues it again'));
}

/** POST .../runs/{run_id}/resume: the owner's answer to the approval the run waits at. */
export async function resumeRun(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  runId: string,
  body: { node_id?: string; answer: Record<string, unknown> },
): Promise<Run> {
  const run = await runOf(ctx, userId, workflowId, runId); // 404 for another user's run
  const approval = run.status === 'waiting' ? await findWaitingApproval(ctx.db, runId, body.node_id) : undefined;
  if (!approval)
    throw runNotWaiting(
      runId,
      body.node_id && run.status === 'waiting' ? `not waiting at "${body.node_id}"` : run.status,
    );
  if (Number(approval.expires_at) <= ctx.now()) throw runNotWaiting(runId, "past its approval's deadline");
  const problems = answerProblemsOf(approval, body.answer, '/body/answer');
  if (problems.length) throw invalidApprovalAnswer(problems);
  await settle(ctx, approval, body.answer);
  return toRun((await store.findRun(ctx.db, runId))!);
}

/** What a link's page shows: its approval while it waits and its link is valid, else why not. */
export type LinkState = { approval: ApprovalRow } | { refused: 'unknown' | 'used' | 'expired' };

export async function approvalOfLink(ctx: Pick<RunContext, 'db' | 'now'>, token: string): Promise<LinkState> {
  const approval = await findApprovalByTokenHash(ctx.db, hashToken(token));
  if (!approval) return { refused: 'unknown' };
  if (approval.state !== 'waiting') return { refused: approval.state === 'timed_out' ? 'expired' : 'used' };
  if (Number(approval.expires_at) <= ctx.now()) return { refused: 'expired' };
  const run = await store.findRun(ctx.db, approval.run_id);
  return run?.status === 'waiting' ? { approval } : { refused: 'used' };
}

/** The link's answer (its page's form): as the API's, with the token for credential. */
export async function answerByLink(
  ctx: RunContext,
  approval: ApprovalRow,
  answer: Record<string, unknown>,
): Promise<ProblemItem[]> {
  const problems = answerProblemsOf(approval, answer, '');
  if (problems.length) return problems;
  await settle(ctx, approval, answer);
  return [];
}
