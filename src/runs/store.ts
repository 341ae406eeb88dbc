// SQL of the runs domain, named by intent. Every state change is a conditional update from the
// state it expects, so concurrent actors (API cancel, a worker, a second worker after a crash)
// cannot overwrite each other: whoever matches the row wins, the others see 0 rows.
import type { Knex } from 'knex';
import { appendRunEvents, insertRunEvents, lastRunEventSeq, type NewRunEvent } from './events.ts';
import { isWriteConflict } from '../db/insert.ts';
import { dialectOf } from '../db/knex.ts';
import { inOneRoundTrip, insertEachWhere, type Statement } from '../db/oneRoundTrip.ts';
import { prepared } from '../db/prepared.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';

// The statements of every run (its insert, claim and end) and of every poll (the run and its
// steps) are prepared (src/db/prepared.ts): building them with knex per call was about a tenth of
// the service's CPU under the runs load (docs/benchmarks.md, issue 19).

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export interface RunRow {
  seq: number;
  id: string;
  workflow_id: string;
  user_id: number;
  status: RunStatus;
  /** JSON object of the inputs, one string per text_input variable. */
  inputs: string;
  /** JSON `{version, nodes, edges}`: the workflow as it was when the run was started. */
  graph: string;
  /** JSON of the output (object keyed by text_output node id), null until completed. */
  output: string | null;
  /** JSON `{code, message, node_id}`, null unless failed or cancelled. */
  error: string | null;
  /** JSON Usage summed over the run's llm_call nodes, written when the run ends; null before. */
  usage: string | null;
  idempotency_key: string | null;
  /** Executions started; also the fencing token of the worker currently holding the run. */
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
}

export type NewRunRow = Omit<RunRow, 'seq'>;

/** The events that tell a run's stream it ended, made from the ended run (service.ts runEndEvents). */
export type EndEvents = (ended: RunRow) => NewRunEvent[];

/** Appends the end events of a run just ended in `trx`: the run's stream sees its end with it, or neither. */
async function appendEndEvents(trx: Knex.Transaction, id: string, endEvents: EndEvents | undefined, now: number): Promise<void> {
  if (!endEvents) return;
  const row = (await trx<RunRow>('runs').where({ id }).first()) as RunRow;
  await appendRunEvents(trx, id, endEvents(fromDb(row)), now);
}

export interface RunStepRow {
  id: number;
  run_id: string;
  node_id: string;
  node_type: string;
  status: string;
  started_at: number | null;
  finished_at: number | null;
  input_preview: string | null;
  output_preview: string | null;
  /** input_preview or output_preview was cut at LOG_TEXT_MAX characters. */
  truncated: boolean;
  usage: string | null;
  error: string | null;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function fromDb(row: RunRow): RunRow {
  return {
    ...row,
    seq: Number(row.seq),
    user_id: Number(row.user_id),
    attempts: Number(row.attempts),
    created_at: Number(row.created_at),
    started_at: num(row.started_at),
    finished_at: num(row.finished_at),
    duration_ms: num(row.duration_ms),
  };
}

/** What insertRunsWithinLimit did with a run: inserted it, or refused it (the user's limit, or the workflow deleted meanwhile). */
export type QuotaInsert = 'inserted' | 'over_limit' | 'workflow_deleted';

/**
 * Inserts the runs (all of one user and one workflow, in order, or it throws) while the user has
 * fewer than `limit` runs queued or running, and answers for each: the first ones that fit are
 * inserted, the rest are over the limit; all are refused when the workflow was deleted since the
 * caller read it.
 * The user's row is locked for the count and the insert, so concurrent starts by one user are
 * counted one after another and never overshoot the limit (the count is the transaction's first
 * consistent read, taken after the lock: on MySQL's REPEATABLE READ and PostgreSQL's READ COMMITTED
 * alike it sees every earlier holder's runs; the `status` index finds the few unfinished). The
 * workflow's row is locked with it: a delete committed before is seen here, and a later one waits
 * for this insert, so its cancel sweep (service.ts cancelRunsOfDeletedWorkflow) sees the runs.
 */
export async function insertRunsWithinLimit(db: Knex, rows: readonly NewRunRow[], limit: number): Promise<QuotaInsert[]> {
  const [first] = rows;
  if (!first) return [];
  const { user_id: userId, workflow_id: workflowId } = first;
  // One user's row is locked and one user's runs counted: a run of another would escape its own limit.
  if (rows.some((row) => row.user_id !== userId || row.workflow_id !== workflowId)) {
    throw new Error('insertRunsWithinLimit: the runs are not all of one user and one workflow');
  }
  if (dialectOf(db) === 'mysql') return insertWithinLimitInOneRoundTrip(db, rows, limit);
  return db.transaction(async (trx) => {
    const locked = await userAndWorkflowLock.first(trx, { userId, workflowId });
    if (!locked || num(locked.deleted_at) !== null) return rows.map(() => 'workflow_deleted' as const);
    const counted = await unfinishedRunsOfUser.first(trx, { userId });
    const fit = rows.slice(0, Math.max(0, limit - Number(counted?.active ?? 0)));
    if (fit.length === 1) await runInsert.run(trx, { ...fit[0]! });
    else if (fit.length > 1) await trx('runs').insert(fit); // its shape varies with the count: built by knex
    return rows.map((_, i) => (i < fit.length ? 'inserted' : 'over_limit'));
  });
}

/**
 * insertRunsWithinLimit's transaction on MySQL in one round trip (src/db/oneRoundTrip.ts): the
 * same lock, then the count into a variable (`SELECT ... INTO`, a consistent read like the plain
 * count: no lock on the runs it counts), then one insert whose rows each carry their own
 * condition (the i-th fits while the count is below `limit - i`, and only while the workflow,
 * locked, is not deleted). The lock's answer says whether the workflow stood; the insert's
 * affected rows how many fit.
 */
async function insertWithinLimitInOneRoundTrip(db: Knex, rows: readonly NewRunRow[], limit: number): Promise<QuotaInsert[]> {
  const { user_id: userId, workflow_id: workflowId } = rows[0]!;
  const count = unfinishedRunsOfUser.statement(db, { userId });
  const [locked, , inserted] = await inOneRoundTrip(db, [
    userAndWorkflowLock.statement(db, { userId, workflowId }),
    { ...count, sql: `${count.sql} INTO @active_runs` },
    insertEachWhere(
      'runs',
      runColumns,
      rows.map((r, i) => ({ values: runColumns.map((c) => r[c]), conditionValues: [limit - i, workflowId] })),
      '@active_runs < ? AND EXISTS (SELECT 1 FROM `workflows` WHERE `id` = ? AND `deleted_at` IS NULL)',
    ),
  ]);
  const workflow = (locked as Array<{ deleted_at: unknown }>)[0];
  if (!workflow || num(workflow.deleted_at) !== null) return rows.map(() => 'workflow_deleted' as const);
  const fit = (inserted as { affectedRows: number }).affectedRows;
  return rows.map((_, i) => (i < fit ? 'inserted' : 'over_limit'));
}

const userAndWorkflowLock = prepared<{ userId: number; workflowId: string }, { deleted_at: unknown }>('run_quota_user_and_workflow_lock', (db, param) =>
  db('users')
    .join('workflows', 'workflows.user_id', 'users.id')
    .where('users.id', param('userId'))
    .andWhere('workflows.id', param('workflowId'))
    .forUpdate()
    .first('workflows.deleted_at'),
);

const unfinishedRunsOfUser = prepared<{ userId: number }, { active: number | string }>('run_quota_unfinished_runs', (db, param) =>
  db('runs').where('user_id', param('userId')).whereIn('status', ['queued', 'running']).count({ active: '*' }),
);

export async function insertRun(db: Knex, row: NewRunRow): Promise<void> {
  await runInsert.run(db, { ...row });
}

const runColumns = [
  'id', 'workflow_id', 'user_id', 'status', 'inputs', 'graph', 'output', 'error', 'usage',
  'idempotency_key', 'attempts', 'created_at', 'started_at', 'finished_at', 'duration_ms',
] as const satisfies readonly (keyof NewRunRow)[];

const runInsert = prepared<{ [K in keyof NewRunRow]: NewRunRow[K] }>('run_insert', (db, param) =>
  db('runs').insert(Object.fromEntries(runColumns.map((c) => [c, param(c)]))),
);

export async function findRun(db: Knex, id: string): Promise<RunRow | undefined> {
  const row = (await db<RunRow>('runs').where({ id }).first()) as RunRow | undefined;
  return row ? fromDb(row) : undefined;
}

/** The run only if it belongs to this user and this workflow (anything else is "not found"). */
export async function findRunOfWorkflow(db: Knex, userId: number, workflowId: string, id: string): Promise<RunRow | undefined> {
  const row = (await db<RunRow>('runs').where({ id, user_id: userId, workflow_id: workflowId }).first()) as RunRow | undefined;
  return row ? fromDb(row) : undefined;
}

/**
 * The run of this user and workflow with its workflow's `deleted_at`, in one query (the read path
 * of a polled run); undefined when either is missing.
 */
export async function findRunOfWorkflowWithDeletion(
  db: Knex,
  userId: number,
  workflowId: string,
  id: string,
): Promise<{ run: RunRow; workflowDeletedAt: number | null } | undefined> {
  const row = (await runWithDeletion.first(db, { id, userId, workflowId })) as (RunRow & { workflow_deleted_at: unknown }) | undefined;
  if (!row) return undefined;
  const { workflow_deleted_at: deletedAt, ...run } = row;
  return { run: fromDb(run), workflowDeletedAt: num(deletedAt) };
}

const runWithDeletion = prepared<{ id: string; userId: number; workflowId: string }>('run_with_workflow_deletion', (db, param) =>
  db('runs')
    .join('workflows', function () {
      this.on('workflows.id', '=', 'runs.workflow_id').andOn('workflows.user_id', '=', 'runs.user_id');
    })
    .select('runs.*', 'workflows.deleted_at as workflow_deleted_at')
    .where({ 'runs.id': param('id'), 'runs.user_id': param('userId'), 'runs.workflow_id': param('workflowId') })
    .first(),
);

export async function findRunByIdempotencyKey(db: Knex, userId: number, workflowId: string, key: string): Promise<RunRow | undefined> {
  const row = (await db<RunRow>('runs').where({ user_id: userId, workflow_id: workflowId, idempotency_key: key }).first()) as
    | RunRow
    | undefined;
  return row ? fromDb(row) : undefined;
}

/** `search` is a status (exact) or a prefix of the run id. */
function runsOf(db: Knex, userId: number, workflowId: string, search: string | undefined): Knex.QueryBuilder {
  const query = db('runs').where({ user_id: userId, workflow_id: workflowId });
  if (!search) return query;
  // Ids are [A-Za-z0-9_]: escape `_` so it is not a LIKE wildcard (`!` escapes alike on both dialects).
  const prefix = search.replace(/[!%_]/g, (c) => '!' + c) + '%';
  return query.andWhere((q) => q.where('status', search).orWhereRaw(`id like ? escape '!'`, [prefix]));
}

export async function countRuns(db: Knex, userId: number, workflowId: string, search?: string): Promise<number> {
  const result = (await runsOf(db, userId, workflowId, search).count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(result?.n ?? 0);
}

/** One page, newest first (insertion sequence never ties). */
export async function listRunsNewestFirst(
  db: Knex,
  userId: number,
  workflowId: string,
  page: { offset: number; limit: number; search?: string },
): Promise<RunRow[]> {
  const rows = (await runsOf(db, userId, workflowId, page.search).orderBy('seq', 'desc').offset(page.offset).limit(page.limit)) as RunRow[];
  return rows.map(fromDb);
}

/** The newest run of each of these workflows of the user (the console's workflow list), by workflow id. */
export async function latestRunsOfWorkflows(db: Knex, userId: number, workflowIds: readonly string[]): Promise<Map<string, RunRow>> {
  if (!workflowIds.length) return new Map();
  const newest = db('runs').where({ user_id: userId }).whereIn('workflow_id', workflowIds).groupBy('workflow_id').max({ seq: 'seq' });
  const rows = (await db('runs').where({ user_id: userId }).whereIn('seq', newest)) as RunRow[];
  return new Map(rows.map((r) => [r.workflow_id, fromDb(r)]));
}

/**
 * queued -> running for the first execution, fenced on the attempt count read with the run (so a
 * run requeued meanwhile is not claimed twice). True when this caller now holds attempt
 * `expectedAttempt + 1`; false if the run was no longer queued (cancelled, or claimed meanwhile).
 */
export async function claimQueuedRun(db: Knex, id: string, expectedAttempt: number, now: number): Promise<boolean> {
  return (await runClaim.run(db, { id, expectedAttempt, nextAttempt: expectedAttempt + 1, now })) === 1;
}

const runClaim = prepared<{ id: string; expectedAttempt: number; nextAttempt: number; now: number }>('run_claim', (db, param) =>
  db('runs')
    .where({ id: param('id'), status: 'queued', attempts: param('expectedAttempt') })
    .update({ status: 'running', started_at: param('now'), attempts: param('nextAttempt') }),
);

/**
 * running -> running for a retry after the previous holder died: bumps the attempt (so the old
 * holder, if it is only slow, can no longer finish the run) and restarts the clock.
 */
export async function takeOverRun(db: Knex, id: string, expectedAttempt: number, now: number): Promise<boolean> {
  const count = await db('runs')
    .where({ id, status: 'running', attempts: expectedAttempt })
    .update({ started_at: now, attempts: expectedAttempt + 1 });
  return count === 1;
}

/**
 * What a worker writes with the run's end (runner.ts): the steps of its log not yet written, and
 * the events not yet written with the end events, numbered after `after` (the last number the
 * worker wrote; undefined when unknown).
 */
export interface FinalEvents {
  events: NewRunEvent[];
  after: number | undefined;
}

export type NewStepRow = Omit<RunStepRow, 'id'>;

/** How a run ends: its outcome, and when. */
export type RunEnd = {
  status: 'completed' | 'failed' | 'cancelled';
  output: string | null;
  error: string | null;
  usage: string | null;
  finished_at: number;
  duration_ms: number;
};

/**
 * The attempt ending a run: `attempt`, which holds it (claimed: the run is `running` with that
 * attempt), or which ran it without claiming it (`startedAt` set: the run is still `queued` with
 * the attempt before, and goes from there to its end in one update, started at `startedAt`).
 */
export interface EndingAttempt {
  attempt: number;
  startedAt?: number;
}

/** Tries of a run's end whose event numbers a stale writer of the run took first. */
const FINISH_TRIES = 5;

/**
 * Ends a run held by its attempt; false when someone else ended it first (e.g. a cancel) or took
 * it over. With the worker's last steps and events, one transaction: the fenced update, then one
 * insert of the steps and one of the events (no read: the worker numbers them; the run's row,
 * locked by the update, keeps a cancel or the sweep from writing end events beside them). Only a
 * stale attempt of the same run can take those numbers: the insert then fails, and the end is
 * tried again with the last number read afresh. On MySQL the transaction is one round trip
 * (src/db/oneRoundTrip.ts) when the numbers are known.
 */
export async function finishRun(db: Knex, id: string, ending: EndingAttempt, end: RunEnd, final?: FinalEvents, steps: readonly NewStepRow[] = []): Promise<boolean> {
  const update = { id, ...end, ...fence(ending) };
  const endRun = ending.startedAt === undefined ? runFinish : unclaimedRunFinish;
  if (!final && !steps.length) return (await endRun.run(db, update)) === 1;
  let after = final?.after;
  if (dialectOf(db) === 'mysql' && (after !== undefined || !final)) {
    try {
      return await finishInOneRoundTrip(db, update, steps, final ? { events: final.events, after: after! } : undefined);
    } catch (err) {
      // A number taken meanwhile (or any other failure): the transaction below reports or survives it.
      if (isDatabaseUnavailable(err)) throw err;
      if (isWriteConflict(err)) after = undefined;
    }
  }
  for (let tries = 1; ; tries++) {
    try {
      return await db.transaction(async (trx) => {
        const count = await endRun.run(trx, update);
        if (count !== 1) return false;
        await insertSteps(trx, steps);
        if (final) await insertRunEvents(trx, id, after ?? (await lastRunEventSeq(trx, id)), final.events, end.finished_at);
        return true;
      });
    } catch (err) {
      if (!isWriteConflict(err) || tries >= FINISH_TRIES) throw err;
      after = undefined;
    }
  }
}

/** The update's fence and what it sets besides the end: the attempt, and the start of an unclaimed run. */
function fence(ending: EndingAttempt) {
  return ending.startedAt === undefined
    ? { attempt: ending.attempt, expectedAttempt: ending.attempt, startedAt: null }
    : { attempt: ending.attempt, expectedAttempt: ending.attempt - 1, startedAt: ending.startedAt };
}

type RunFinishParams = RunEnd & { id: string; attempt: number; expectedAttempt: number; startedAt: number | null };

/** What a run's end sets, whichever state it ends the run from. */
const endOf = (param: (name: keyof RunFinishParams & string) => string) => ({
  status: param('status'),
  output: param('output'),
  error: param('error'),
  usage: param('usage'),
  finished_at: param('finished_at'),
  duration_ms: param('duration_ms'),
});

const runFinish = prepared<RunFinishParams>('run_finish', (db, param) =>
  db('runs').where({ id: param('id'), status: 'running', attempts: param('attempt') }).update(endOf(param)),
);

const unclaimedRunFinish = prepared<RunFinishParams>('run_finish_unclaimed', (db, param) =>
  db('runs')
    .where({ id: param('id'), status: 'queued', attempts: param('expectedAttempt') })
    .update({ ...endOf(param), started_at: param('startedAt'), attempts: param('attempt') }),
);

/** finishRun's transaction on MySQL in one round trip: the inserts run only if the update ended the run. */
async function finishInOneRoundTrip(
  db: Knex,
  update: RunFinishParams,
  steps: readonly NewStepRow[],
  final: { events: NewRunEvent[]; after: number } | undefined,
): Promise<boolean> {
  const ended = '@run_ended = 1';
  const statements: Statement[] = [
    (update.startedAt === null ? runFinish : unclaimedRunFinish).statement(db, update),
    { sql: 'SET @run_ended = ROW_COUNT()', values: [] },
  ];
  if (steps.length) statements.push(insertEachWhere('run_steps', STEP_COLUMNS, steps.map((s) => ({ values: STEP_COLUMNS.map((c) => s[c]) })), ended));
  if (final?.events.length) {
    const rows = final.events.map((e, i) => ({ values: [update.id, final.after + i + 1, e.type, JSON.stringify(e.data), update.finished_at] }));
    statements.push(insertEachWhere('run_events', ['run_id', 'seq', 'type', 'data', 'created_at'], rows, ended));
  }
  const [endUpdate] = await inOneRoundTrip(db, statements);
  return (endUpdate as { affectedRows: number }).affectedRows === 1;
}

const STEP_COLUMNS = ['run_id', 'node_id', 'node_type', 'status', 'started_at', 'finished_at', 'input_preview', 'output_preview', 'truncated', 'usage', 'error'] as const;

/**
 * Fails a run that is not yet terminal (queue write failed, worker lost, store unavailable), and
 * closes the steps its lost attempt left `running` with the same error: no step stays open.
 */
export async function failUnfinishedRun(db: Knex, id: string, error: string, now: number, endEvents?: EndEvents): Promise<boolean> {
  const row = await findRun(db, id);
  if (!row || TERMINAL.includes(row.status)) return false;
  const { code, message } = JSON.parse(error) as { code: string; message: string };
  return db.transaction(async (trx) => {
    const count = await trx('runs')
      .where({ id, status: row.status, attempts: row.attempts })
      .update({
        status: 'failed',
        error,
        finished_at: now,
        duration_ms: row.started_at === null ? null : Math.max(0, now - row.started_at),
      });
    if (count !== 1) return false;
    await trx('run_steps').where({ run_id: id, status: 'running' }).update({ status: 'failed', finished_at: now, error: JSON.stringify({ code, message }) });
    await appendEndEvents(trx, id, endEvents, now);
    return true;
  });
}

/** A run that failed only because it could not be enqueued goes back to queued (idempotent retry). */
export async function requeueRun(db: Knex, id: string, error: string): Promise<boolean> {
  const count = await db('runs')
    .where({ id, status: 'failed', error })
    .update({ status: 'queued', error: null, finished_at: null, duration_ms: null });
  return count === 1;
}

/** queued|running -> cancelled. False when the run was already terminal. */
export async function cancelRun(db: Knex, id: string, now: number, error: string, endEvents?: EndEvents): Promise<boolean> {
  // A worker may move it queued -> running between our read and write: read again and retry.
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await findRun(db, id);
    if (!row || TERMINAL.includes(row.status)) return false;
    const cancelled = await db.transaction(async (trx) => {
      const count = await trx('runs')
        .where({ id, status: row.status, attempts: row.attempts })
        .update({
          status: 'cancelled',
          error,
          finished_at: now,
          duration_ms: row.started_at === null ? null : Math.max(0, now - row.started_at),
        });
      if (count !== 1) return false;
      await appendEndEvents(trx, id, endEvents, now);
      return true;
    });
    if (cancelled) return true;
  }
  return false;
}

/** Ids of the workflow's runs that are not yet terminal. */
export async function listUnfinishedRunsOfWorkflow(db: Knex, workflowId: string): Promise<string[]> {
  const rows = (await db('runs').select('id').where({ workflow_id: workflowId }).whereIn('status', ['queued', 'running'])) as { id: string }[];
  return rows.map((r) => r.id);
}

export async function runStatusAndAttempt(db: Knex, id: string): Promise<{ status: RunStatus; attempts: number } | undefined> {
  const row = (await db('runs').select('status', 'attempts').where({ id }).first()) as { status: RunStatus; attempts: number } | undefined;
  return row ? { status: row.status, attempts: Number(row.attempts) } : undefined;
}

/** Status and attempt of many runs in one query (the runs a worker is executing); missing runs are absent. */
export async function runStatesOf(db: Knex, ids: readonly string[]): Promise<Map<string, { status: RunStatus; attempts: number }>> {
  const states = new Map<string, { status: RunStatus; attempts: number }>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = (await db('runs').select('id', 'status', 'attempts').whereIn('id', ids.slice(i, i + 500))) as { id: string; status: RunStatus; attempts: number }[];
    for (const r of rows) states.set(r.id, { status: r.status, attempts: Number(r.attempts) });
  }
  return states;
}

/** Ids of runs in `status` since before `cutoff` (by created_at for queued, started_at for running). */
export async function listRunsStuckSince(db: Knex, status: 'queued' | 'running', cutoff: number, limit: number): Promise<string[]> {
  const column = status === 'queued' ? 'created_at' : 'started_at';
  const rows = (await db('runs').select('id').where({ status }).andWhere(column, '<', cutoff).orderBy('seq').limit(limit)) as { id: string }[];
  return rows.map((r) => r.id);
}

/** Inserts steps in the order given, which is their execution order (listSteps orders by id). */
export async function insertSteps(db: Knex, rows: readonly NewStepRow[]): Promise<void> {
  if (rows.length) await db('run_steps').insert(rows);
}

export async function finishStep(
  db: Knex,
  runId: string,
  nodeId: string,
  end: Pick<RunStepRow, 'status' | 'finished_at' | 'output_preview' | 'truncated' | 'usage' | 'error'>,
): Promise<void> {
  await db('run_steps').where({ run_id: runId, node_id: nodeId, status: 'running' }).update(end);
}

/** A retry runs the graph from scratch: the dead attempt's log goes. */
export async function deleteSteps(db: Knex, runId: string): Promise<void> {
  await db('run_steps').where({ run_id: runId }).delete();
}

/** Steps in execution (start) order. */
export async function listSteps(db: Knex, runId: string): Promise<RunStepRow[]> {
  const rows = (await stepsOfRun.rows(db, { runId })) as unknown as RunStepRow[];
  return rows.map((r) => ({ ...r, id: Number(r.id), started_at: num(r.started_at), finished_at: num(r.finished_at), truncated: Boolean(r.truncated) }));
}

const stepsOfRun = prepared<{ runId: string }>('run_steps_of_run', (db, param) => db('run_steps').where({ run_id: param('runId') }).orderBy('id', 'asc'));
