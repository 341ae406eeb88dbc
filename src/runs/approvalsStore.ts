// The SQL of approval nodes (run_approvals, 0028_approval): a run's pause at them, their answers
// and timeouts. Each change of state is a conditional update inside one transaction with the run's
// own (waiting -> queued), so of two answers, or an answer and the timeout, exactly one wins, and
// the run goes on once. Plain knex: the same statements on PostgreSQL and MySQL.
import type { Knex } from 'knex';
import { appendRunEvents, type NewRunEvent } from './events.ts';
import type { NewStepRow } from './store.ts';

const TABLE = 'run_approvals';

export interface ApprovalRow {
  id: number;
  run_id: string;
  node_id: string;
  token_hash: string;
  state: 'waiting' | 'answered' | 'timed_out';
  message: string;
  answer_schema: string;
  answer: string | null;
  created_at: number;
  expires_at: number;
  answered_at: number | null;
}

export type NewApproval = Omit<ApprovalRow, 'id' | 'state' | 'answer' | 'answered_at'>;

/** What a paused attempt writes: the run's new state (fenced on its attempt), its last steps and events. */
export interface Pause {
  runId: string;
  attempt: number;
  now: number;
  steps: readonly NewStepRow[];
  /** Events, each written only when its approval is new (a node waiting again after another's answer is told once). */
  events: NewRunEvent[];
  approvals: readonly { row: NewApproval; events: NewRunEvent[] }[];
}

/** running -> waiting for the attempt that holds the run, with its last steps and events; false when it no longer holds it. */
export async function pauseRun(db: Knex, pause: Pause): Promise<boolean> {
  return db.transaction(async (trx) => {
    const count = await trx('runs')
      .where({ id: pause.runId, status: 'running', attempts: pause.attempt })
      .update({ status: 'waiting' });
    if (count !== 1) return false;
    if (pause.steps.length) await trx('run_steps').insert(pause.steps);
    const known = new Set(
      ((await trx(TABLE).where({ run_id: pause.runId }).select('node_id')) as { node_id: string }[]).map(
        (r) => r.node_id,
      ),
    );
    const events = [...pause.events];
    for (const { row, events: told } of pause.approvals) {
      if (known.has(row.node_id)) continue;
      await trx(TABLE).insert({ ...row, state: 'waiting', answer: null, answered_at: null });
      events.splice(events.length - 1, 0, ...told); // before the run's own `waiting` status, the last
    }
    await appendRunEvents(trx, pause.runId, events, pause.now);
    return true;
  });
}

/** The run's approval of a node, as stored. */
export async function findApproval(db: Knex, runId: string, nodeId: string): Promise<ApprovalRow | undefined> {
  return (await db(TABLE).where({ run_id: runId, node_id: nodeId }).first()) as ApprovalRow | undefined;
}

/** The approval a run waits at: the one named, or its first still waiting. */
export async function findWaitingApproval(db: Knex, runId: string, nodeId?: string): Promise<ApprovalRow | undefined> {
  const q = db(TABLE).where({ run_id: runId, state: 'waiting' });
  if (nodeId !== undefined) void q.andWhere({ node_id: nodeId });
  return (await q.orderBy('id').first()) as ApprovalRow | undefined;
}

/** The approval a link's token opens (by the token's hash). */
export async function findApprovalByTokenHash(db: Knex, tokenHash: string): Promise<ApprovalRow | undefined> {
  return (await db(TABLE).where({ token_hash: tokenHash }).first()) as ApprovalRow | undefined;
}

/**
 * waiting -> answered (with `answer`) or timed_out, and the run waiting -> queued, in one
 * transaction; the node's `waiting` step is cleared (the continuing attempt logs it afresh, with
 * its output). False, nothing changed, when the approval was no longer waiting (another answer or
 * the timeout came first) or the run no longer waits (cancelled).
 */
export async function settleApproval(
  db: Knex,
  approval: Pick<ApprovalRow, 'id' | 'run_id' | 'node_id'>,
  outcome: { state: 'answered'; answer: string } | { state: 'timed_out' },
  now: number,
): Promise<boolean> {
  return db
    .transaction(async (trx) => {
      // An answer counts only before the deadline, to the millisecond: not until the sweep times it out.
      const answeredBy = outcome.state === 'answered' ? now : Number.MIN_SAFE_INTEGER;
      const settled = await trx(TABLE)
        .where({ id: approval.id, state: 'waiting' })
        .andWhere('expires_at', '>', answeredBy)
        .update({
          state: outcome.state,
          answer: outcome.state === 'answered' ? outcome.answer : null,
          answered_at: now,
        });
      if (settled !== 1) return false;
      const resumed = await trx('runs').where({ id: approval.run_id, status: 'waiting' }).update({ status: 'queued' });
      if (resumed !== 1) throw new RunNoLongerWaits(); // the approval's update is undone with it
      await trx('run_steps').where({ run_id: approval.run_id, node_id: approval.node_id, status: 'waiting' }).delete();
      await appendRunEvents(trx, approval.run_id, [{ type: 'run.status', data: { status: 'queued' } }], now);
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof RunNoLongerWaits) return false;
      throw err;
    });
}

class RunNoLongerWaits extends Error {}

/** Approvals past their time whose run still waits: the sweep times them out. */
export async function listExpiredApprovals(
  db: Knex,
  now: number,
  limit: number,
): Promise<(Pick<ApprovalRow, 'id' | 'run_id' | 'node_id'> & { user_id: number | string })[]> {
  return (await db(`${TABLE} as a`)
    .join('runs as r', 'r.id', 'a.run_id')
    .where('a.state', 'waiting')
    .andWhere('a.expires_at', '<=', now)
    .andWhere('r.status', 'waiting')
    .orderBy('a.expires_at')
    .limit(limit)
    .select('a.id', 'a.run_id', 'a.node_id', 'r.user_id')) as (Pick<ApprovalRow, 'id' | 'run_id' | 'node_id'> & {
    user_id: number | string;
  })[];
}

/** A waiting run was cancelled: its approval steps end `cancelled`, as a running step's would. */
export async function closeWaitingSteps(db: Knex, runId: string, now: number): Promise<void> {
  await db('run_steps').where({ run_id: runId, status: 'waiting' }).update({ status: 'cancelled', finished_at: now });
}
