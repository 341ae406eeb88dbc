// The runs store (runsStore.ts) on PostgreSQL: each state change that writes more than one row is
// a knex transaction. MySQL's adapter (runsStoreMysql.ts) extends this one, and keeps its
// transactions for what it does not send in one round trip.
import type { Knex } from 'knex';
import { isWriteConflict } from '../db/insert.ts';
import { appendRunEvents, appendRunEventsAfter, insertRunEvents, lastRunEventSeq, type NewRunEvent } from './events.ts';
import {
  runClaim,
  runFinish,
  runInsert,
  unclaimedRunFinish,
  unfinishedRunsOfUser,
  userAndWorkflowLock,
  type RunFinishParams,
} from './runStatements.ts';
import { findRun, fromDb, LOG_TEXT_MAX, num, TERMINAL } from './store.ts';
import type {
  EndEvents,
  EndingAttempt,
  FinalEvents,
  KeptStep,
  NewRunRow,
  NewStepRow,
  QuotaInsert,
  RunEnd,
  RunSpent,
  RunRow,
  StepEnd,
  StreamSoFar,
} from './store.ts';

/** Tries of a run's end whose event numbers a stale writer of the run took first. */
const FINISH_TRIES = 5;
/** Tries of a cancel whose run a worker moved queued -> running between its read and its write. */
const CANCEL_TRIES = 5;

/** The runs store's adapter for PostgreSQL (implements RunsStore, runsStore.ts). */
export class PostgresRunsStore {
  protected readonly db: Knex;

  constructor(db: Knex) {
    this.db = db;
  }

  async start(row: NewRunRow): Promise<void> {
    await runInsert.run(this.db, { retry_of: null, access_token_id: null, trace_context: null, ...row }); // columns most runs leave unset
  }

  /** One transaction: the lock, the count, the insert of those that fit. */
  async startWithinQuota(rows: readonly NewRunRow[], limit: number): Promise<QuotaInsert[]> {
    if (!rows.length) return [];
    const { userId, workflowId } = ownerOf(rows);
    return this.db.transaction(async (trx) => {
      const locked = await userAndWorkflowLock.first(trx, { userId, workflowId });
      if (!locked || num(locked.deleted_at) !== null) return rows.map(() => 'workflow_deleted' as const);
      const counted = await unfinishedRunsOfUser.first(trx, { userId });
      const fit = rows.slice(0, Math.max(0, limit - Number(counted?.active ?? 0)));
      if (fit.length === 1)
        await runInsert.run(trx, { retry_of: null, access_token_id: null, trace_context: null, ...fit[0]! });
      else if (fit.length > 1) await trx('runs').insert(fit); // its shape varies with the count: built by knex
      return rows.map((_, i) => (i < fit.length ? 'inserted' : 'over_limit'));
    });
  }

  async claim(id: string, expectedAttempt: number, now: number): Promise<boolean> {
    return (await runClaim.run(this.db, { id, expectedAttempt, nextAttempt: expectedAttempt + 1, now })) === 1;
  }

  async takeOver(
    id: string,
    expectedAttempt: number,
    now: number,
    continued: readonly string[],
  ): Promise<KeptStep[] | undefined> {
    return this.db.transaction(async (trx) => {
      // The run keeps the start of its first attempt: its `duration` spans every attempt.
      const count = await trx('runs')
        .where({ id, status: 'running', attempts: expectedAttempt })
        .update({ started_at: trx.raw('COALESCE(started_at, ?)', [now]), attempts: expectedAttempt + 1 });
      if (count !== 1) return undefined;
      await trx('run_steps')
        .where({ run_id: id })
        .whereNot((kept) => keptStep(kept, continued))
        .delete();
      const kept = (await trx('run_steps')
        .where({ run_id: id })
        .orderBy('id')
        .select(
          ...['node_id', 'status', 'output_preview', 'output_json', 'usage', 'reused_from'],
          ...['cost_nanos', 'cost_input_nanos', 'cost_currency'],
        )) as KeptStep[];
      // MySQL's booleans are 0 and 1; `reused_from` only on a retry's reused steps, the cost on priced ones.
      return kept.map(
        ({ reused_from: from, cost_nanos: nanos, cost_input_nanos: input, cost_currency: c, ...step }) => ({
          ...step,
          output_json: Boolean(step.output_json),
          ...(from ? { reused_from: from } : {}),
          ...(nanos !== null && nanos !== undefined
            ? { cost_nanos: nanos, cost_input_nanos: input, cost_currency: c }
            : {}),
        }),
      );
    });
  }

  async appendSteps(rows: readonly NewStepRow[]): Promise<void> {
    if (rows.length) await this.db('run_steps').insert(rows);
  }

  async keepSpent(id: string, attempt: number, spent: RunSpent): Promise<void> {
    await this.db('runs').where({ id, status: 'cancelled', attempts: attempt }).whereNull('usage').update(spent);
  }

  async endStep(runId: string, nodeId: string, end: StepEnd): Promise<void> {
    await this.db('run_steps').where({ run_id: runId, node_id: nodeId, status: 'running' }).update(end);
  }

  appendEvents(runId: string, after: number | undefined, events: NewRunEvent[], now: number): Promise<number> {
    return appendRunEventsAfter(this.db, runId, after, events, now);
  }

  /**
   * One transaction: the fenced update, then one insert of the steps and one of the events (no
   * read: the worker numbers them; the run's row, locked by the update, keeps a cancel or the sweep
   * from writing end events beside them). Only a stale attempt of the same run can take those
   * numbers: the insert then fails, and the end is tried again with the last number read afresh.
   */
  async finish(
    id: string,
    ending: EndingAttempt,
    end: RunEnd,
    final?: FinalEvents,
    steps: readonly NewStepRow[] = [],
  ): Promise<boolean> {
    const update = finishParams(id, ending, end);
    if (!final && !steps.length) return (await finishStatementOf(update).run(this.db, update)) === 1;
    return this.finishInTransaction(update, final, steps);
  }

  protected async finishInTransaction(
    update: RunFinishParams,
    final: FinalEvents | undefined,
    steps: readonly NewStepRow[],
  ): Promise<boolean> {
    let after = final?.after;
    for (let tries = 1; ; tries++) {
      try {
        return await this.db.transaction(async (trx) => {
          if ((await finishStatementOf(update).run(trx, update)) !== 1) return false;
          if (steps.length) await trx('run_steps').insert(steps);
          if (final)
            await insertRunEvents(
              trx,
              update.id,
              after ?? (await lastRunEventSeq(trx, update.id)),
              final.events,
              update.finished_at,
            );
          return true;
        });
      } catch (err) {
        if (!isWriteConflict(err) || tries >= FINISH_TRIES) throw err;
        after = undefined;
      }
    }
  }

  async cancel(id: string, now: number, error: string, endEvents?: EndEvents): Promise<boolean> {
    for (let tries = 0; tries < CANCEL_TRIES; tries++) {
      const row = await findRun(this.db, id);
      if (!row || TERMINAL.includes(row.status)) return false;
      const cancelled = await this.db.transaction(async (trx) => {
        if (!(await endFrom(trx, row, { status: 'cancelled', error }, now))) return false;
        await appendEndEvents(trx, id, endEvents, now);
        return true;
      });
      if (cancelled) return true;
    }
    return false;
  }

  async failUnfinished(id: string, error: string, now: number, endEvents?: EndEvents): Promise<boolean> {
    const row = await findRun(this.db, id);
    if (!row || TERMINAL.includes(row.status)) return false;
    const { code, message } = JSON.parse(error) as { code: string; message: string };
    return this.db.transaction(async (trx) => {
      if (!(await endFrom(trx, row, { status: 'failed', error }, now))) return false;
      await trx('run_steps')
        .where({ run_id: id, status: 'running' })
        .update({ status: 'failed', finished_at: now, error: JSON.stringify({ code, message }) });
      await appendEndEvents(trx, id, endEvents, now);
      return true;
    });
  }

  async requeue(id: string, error: string): Promise<boolean> {
    const count = await this.db('runs')
      .where({ id, status: 'failed', error })
      .update({ status: 'queued', error: null, finished_at: null, duration_ms: null });
    return count === 1;
  }
}

/**
 * The steps a takeover keeps (runsStore.takeOver): skipped, or finished with an output the log
 * holds whole (logText cuts at LOG_TEXT_MAX, or one less before a surrogate pair).
 */
function keptStep(q: Knex.QueryBuilder, continued: readonly string[]): void {
  void q.where('status', 'skipped').orWhere((finished) => {
    void finished
      .where(
        (ended) =>
          void ended
            .where('status', 'completed')
            .orWhere((failed) => void failed.where('status', 'failed').whereIn('node_id', [...continued])),
      )
      .andWhere(
        (whole) =>
          void whole.whereNull('output_preview').orWhereRaw('char_length(output_preview) < ?', [LOG_TEXT_MAX - 1]),
      );
  });
}

/** The user and workflow of runs started together; one user's row is locked, so they must all be one user's. */
export function ownerOf(rows: readonly NewRunRow[]): { userId: number; workflowId: string } {
  const { user_id: userId, workflow_id: workflowId } = rows[0]!;
  if (rows.some((row) => row.user_id !== userId || row.workflow_id !== workflowId)) {
    throw new Error('insertRunsWithinLimit: the runs are not all of one user and one workflow');
  }
  return { userId, workflowId };
}

/** The end's update: its fence (the attempt, and for an unclaimed run the attempt before) and what it sets. */
export function finishParams(id: string, ending: EndingAttempt, given: RunEnd): RunFinishParams {
  const end = { cost_nanos: null, cost_input_nanos: null, cost_currency: null, ...given };
  return ending.startedAt === undefined
    ? { id, ...end, attempt: ending.attempt, expectedAttempt: ending.attempt, startedAt: null }
    : { id, ...end, attempt: ending.attempt, expectedAttempt: ending.attempt - 1, startedAt: ending.startedAt };
}

/** The end's prepared update: from `running` for a claimed attempt, from `queued` for an unclaimed one. */
export const finishStatementOf = (update: RunFinishParams) =>
  update.startedAt === null ? runFinish : unclaimedRunFinish;

/** `row` (as read) -> terminal, fenced on the state and attempt it was read in. */
async function endFrom(
  trx: Knex.Transaction,
  row: RunRow,
  end: { status: 'cancelled' | 'failed'; error: string },
  now: number,
): Promise<boolean> {
  const count = await trx('runs')
    .where({ id: row.id, status: row.status, attempts: row.attempts })
    .update({
      ...end,
      finished_at: now,
      duration_ms: row.started_at === null ? null : Math.max(0, now - row.started_at),
    });
  return count === 1;
}

/** Appends the end events of a run just ended in `trx`: the run's stream sees its end with it, or neither. */
async function appendEndEvents(
  trx: Knex.Transaction,
  id: string,
  endEvents: EndEvents | undefined,
  now: number,
): Promise<void> {
  if (!endEvents) return;
  const row = (await trx<RunRow>('runs').where({ id }).first()) as RunRow;
  await appendRunEvents(trx, id, endEvents(fromDb(row), await streamSoFar(trx, id)), now);
}

/** Which nodes the run's stream has told of, read in the ending transaction (a cancelled run's nodes). */
async function streamSoFar(trx: Knex.Transaction, id: string): Promise<StreamSoFar> {
  const rows = (await trx('run_events')
    .where({ run_id: id })
    .whereIn('type', ['node.started', 'node.finished'])
    .select('type', 'data')) as { type: string; data: string }[];
  const told = { started: new Set<string>(), finished: new Set<string>() };
  for (const { type, data } of rows)
    (type === 'node.started' ? told.started : told.finished).add((JSON.parse(data) as { node_id: string }).node_id);
  // A retry's reused steps are finished before its first attempt tells of them (retrySeed.ts): a
  // retry cancelled while queued must not call them not started.
  const reused = (await trx('run_steps').where({ run_id: id }).whereNotNull('reused_from').select('node_id')) as {
    node_id: string;
  }[];
  for (const { node_id } of reused) told.finished.add(node_id);
  return told;
}
