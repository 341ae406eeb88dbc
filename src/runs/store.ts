// The runs domain's rows and its reads, named by intent. Every state change of a run is the runs
// store's (runsStore.ts, one method each, an adapter per dialect); this module only reads.
import type { Knex } from 'knex';
import type { NewRunEvent } from './events.ts';
import { prepared } from '../db/prepared.ts';

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled' | 'waiting';
export const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];
/** For a status read off the wire, where the contract's open enum makes it a plain string. */
export const isTerminal = (status: string): boolean => (TERMINAL as readonly string[]).includes(status);

export interface RunRow {
  seq: number;
  id: string;
  workflow_id: string;
  user_id: number;
  status: RunStatus;
  /** JSON object of the inputs, one JSON value per text_input variable (a string unless it declares a type). */
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
  /** The failed or cancelled run this one retries (its completed steps reused), null for any other run. */
  retry_of?: string | null;
  /** The API key (access token id) that started the run; null for any other start. */
  access_token_id?: number | null;
  /** What the run's model calls cost, in billionths of `cost_currency` (src/shared/prices.ts); null: no priced model (or before its end). Read as a string on PostgreSQL. */
  cost_nanos?: number | string | null;
  /** Of `cost_nanos`, the input tokens' part (cached ones included). */
  cost_input_nanos?: number | string | null;
  /** ISO 4217 code of the price table when the run's steps were priced. */
  cost_currency?: string | null;
  /** The `traceparent` the run was created in (tracing on), for the links of its later spans; else null. */
  trace_context?: string | null;
}

export type NewRunRow = Omit<RunRow, 'seq'>;

export type NewStepRow = Omit<RunStepRow, 'id'>;

/** How a run ends: its outcome, and when. */
export type RunEnd = {
  status: 'completed' | 'failed' | 'cancelled';
  output: string | null;
  error: string | null;
  usage: string | null;
  /** The run's cost (RunRow's columns), summed over its steps'; null or absent: none priced. */
  cost_nanos?: number | null;
  cost_input_nanos?: number | null;
  cost_currency?: string | null;
  finished_at: number;
  duration_ms: number;
};

/** What a run's model calls spent, as its end writes it. */
export type RunSpent = Pick<RunEnd, 'usage' | 'cost_nanos' | 'cost_input_nanos' | 'cost_currency'>;

/** The nodes the run's stream has told of so far: started, and finished (or skipped). */
export interface StreamSoFar {
  started: ReadonlySet<string>;
  finished: ReadonlySet<string>;
}

/**
 * The events that tell a run's stream it ended, made from the ended run (service.ts runEndEvents);
 * `told`, when the ender is not the worker (a cancel, a sweep), says which nodes still need their
 * node.finished.
 */
export type EndEvents = (ended: RunRow, told?: StreamSoFar) => NewRunEvent[];

/** What the quota did with a run: inserted it, or refused it (the user's limit, or the workflow deleted meanwhile). */
export type QuotaInsert = 'inserted' | 'over_limit' | 'workflow_deleted';

/**
 * The attempt ending a run: `attempt`, which holds it (claimed: the run is `running` with that
 * attempt), or which ran it without claiming it (`startedAt` set: the run is still `queued` with
 * the attempt before, and goes from there to its end in one update, started at `startedAt`).
 */
export interface EndingAttempt {
  attempt: number;
  startedAt?: number;
}

/**
 * What a worker writes with the run's end: the events not yet written with the end events,
 * numbered after `after` (the last number the worker wrote; undefined when unknown).
 */
export interface FinalEvents {
  events: NewRunEvent[];
  after: number | undefined;
}

/**
 * A step a new attempt resumes from (runsStore.takeOver): a node the run's earlier attempts
 * finished, `completed` (its output as logged), `skipped`, or `failed` and continued past
 * (`on_error: continue`): the run goes on from them without running them again.
 */
export type KeptStep = Pick<
  RunStepRow,
  'node_id' | 'status' | 'output_preview' | 'output_json' | 'usage' | 'reused_from' | StepCostColumn
>;

/** A step's cost, as a run's (RunRow's `cost_*`). */
export type StepCostColumn = 'cost_nanos' | 'cost_input_nanos' | 'cost_currency';

export type StepEnd = Pick<
  RunStepRow,
  | 'status'
  | 'finished_at'
  | 'output_preview'
  | 'output_json'
  | 'truncated'
  | 'usage'
  | 'error'
  | 'attempts'
  | StepCostColumn
  | 'chosen_case'
>;

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
  /** output_preview is the JSON of a value that is not a string (typed values). */
  output_json: boolean;
  usage: string | null;
  error: string | null;
  /** Calls to the model provider (1 plus retries); null (or absent) for a node that makes none (RunStep.attempts). */
  attempts?: number | null;
  /** The run this step was copied from, its output reused (a retry's), null (or absent) for a step run here. */
  reused_from?: string | null;
  /** What the step's model calls cost, as a run's (RunRow's `cost_*`); null or absent: no priced model. */
  cost_nanos?: number | string | null;
  cost_input_nanos?: number | string | null;
  cost_currency?: string | null;
  /** A switch's chosen case (RunStep.case); null or absent for other nodes and steps logged before it was kept. */
  chosen_case?: string | null;
}

/** A step's input and output are logged whole up to this many characters (openapi.yaml RunStep; stepLog.ts cuts them). */
export const LOG_TEXT_MAX = 200_000;

export const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** A row as the driver returns it (numbers as strings on PostgreSQL's bigint), typed. */
export function fromDb(row: RunRow): RunRow {
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

export async function findRun(db: Knex, id: string): Promise<RunRow | undefined> {
  const row = (await db<RunRow>('runs').where({ id }).first()) as RunRow | undefined;
  return row ? fromDb(row) : undefined;
}

/** The run only if it belongs to this user and this workflow (anything else is "not found"). */
export async function findRunOfWorkflow(
  db: Knex,
  userId: number,
  workflowId: string,
  id: string,
): Promise<RunRow | undefined> {
  const row = (await db<RunRow>('runs').where({ id, user_id: userId, workflow_id: workflowId }).first()) as
    RunRow | undefined;
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
  const row = (await runWithDeletion.first(db, { id, userId, workflowId })) as
    (RunRow & { workflow_deleted_at: unknown }) | undefined;
  if (!row) return undefined;
  const { workflow_deleted_at: deletedAt, ...run } = row;
  return { run: fromDb(run), workflowDeletedAt: num(deletedAt) };
}

export async function findRunByIdempotencyKey(
  db: Knex,
  userId: number,
  workflowId: string,
  key: string,
): Promise<RunRow | undefined> {
  const row = (await db<RunRow>('runs')
    .where({ user_id: userId, workflow_id: workflowId, idempotency_key: key })
    .first()) as RunRow | undefined;
  return row ? fromDb(row) : undefined;
}

/** Takes the key off the run (a delivery id seen after its window): a new run may take it. */
export async function releaseIdempotencyKey(db: Knex, runId: string, key: string): Promise<void> {
  await db('runs').where({ id: runId, idempotency_key: key }).update({ idempotency_key: null });
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
  const result = (await runsOf(db, userId, workflowId, search).count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(result?.n ?? 0);
}

/** One page, newest first (insertion sequence never ties). */
export async function listRunsNewestFirst(
  db: Knex,
  userId: number,
  workflowId: string,
  page: { offset: number; limit: number; search?: string },
): Promise<RunRow[]> {
  const rows = (await runsOf(db, userId, workflowId, page.search)
    .orderBy('seq', 'desc')
    .offset(page.offset)
    .limit(page.limit)) as RunRow[];
  return rows.map(fromDb);
}

/** The newest run of each of these workflows of the user (the console's workflow list), by workflow id. */
export async function latestRunsOfWorkflows(
  db: Knex,
  userId: number,
  workflowIds: readonly string[],
): Promise<Map<string, RunRow>> {
  if (!workflowIds.length) return new Map();
  const newest = db('runs')
    .where({ user_id: userId })
    .whereIn('workflow_id', workflowIds)
    .groupBy('workflow_id')
    .max({ seq: 'seq' });
  const rows = (await db('runs').where({ user_id: userId }).whereIn('seq', newest)) as RunRow[];
  return new Map(rows.map((r) => [r.workflow_id, fromDb(r)]));
}

/** Ids of the workflow's runs that are not yet terminal. */
export async function listUnfinishedRunsOfWorkflow(db: Knex, workflowId: string): Promise<string[]> {
  const rows = (await db('runs')
    .select('id')
    .where({ workflow_id: workflowId })
    .whereIn('status', ['queued', 'running', 'waiting'])) as { id: string }[];
  return rows.map((r) => r.id);
}

export async function runStatusAndAttempt(
  db: Knex,
  id: string,
): Promise<{ status: RunStatus; attempts: number } | undefined> {
  const row = (await db('runs').select('status', 'attempts').where({ id }).first()) as
    { status: RunStatus; attempts: number } | undefined;
  return row ? { status: row.status, attempts: Number(row.attempts) } : undefined;
}

/** Status and attempt of many runs in one query (the runs a worker is executing); missing runs are absent. */
export async function runStatesOf(
  db: Knex,
  ids: readonly string[],
): Promise<Map<string, { status: RunStatus; attempts: number }>> {
  const states = new Map<string, { status: RunStatus; attempts: number }>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = (await db('runs')
      .select('id', 'status', 'attempts')
      .whereIn('id', ids.slice(i, i + 500))) as { id: string; status: RunStatus; attempts: number }[];
    for (const r of rows) states.set(r.id, { status: r.status, attempts: Number(r.attempts) });
  }
  return states;
}

/** Ids of runs in `status` since before `cutoff` (by created_at for queued, started_at for running). */
export async function listRunsStuckSince(
  db: Knex,
  status: 'queued' | 'running',
  cutoff: number,
  limit: number,
): Promise<{ id: string; userId: string }[]> {
  const column = status === 'queued' ? 'created_at' : 'started_at';
  const rows = (await db('runs')
    .select('id', 'user_id')
    .where({ status })
    .andWhere(column, '<', cutoff)
    .orderBy('seq')
    .limit(limit)) as { id: string; user_id: number | string }[];
  return rows.map((r) => ({ id: r.id, userId: String(r.user_id) }));
}

const stepFromDb = (r: RunStepRow): RunStepRow => ({
  ...r,
  id: Number(r.id),
  started_at: num(r.started_at),
  finished_at: num(r.finished_at),
  truncated: Boolean(r.truncated),
  output_json: Boolean(r.output_json),
});

/** Steps in execution (start) order. */
export async function listSteps(db: Knex, runId: string): Promise<RunStepRow[]> {
  const rows = (await stepsOfRun.rows(db, { runId })) as unknown as RunStepRow[];
  return rows.map(stepFromDb);
}

/** At most `limit` steps after the step numbered `afterId`, in execution order: a walk of the (run_id, id) index. */
export async function listStepsAfter(db: Knex, runId: string, afterId: number, limit: number): Promise<RunStepRow[]> {
  const rows = (await db('run_steps')
    .where({ run_id: runId })
    .andWhere('id', '>', afterId)
    .orderBy('id', 'asc')
    .limit(limit)) as RunStepRow[];
  return rows.map(stepFromDb);
}

/**
 * The steps a run's detail shows, bounded: every step outside a map's items (as many as the graphs
 * have nodes), and the first `maxItemSteps` inside them (`<map>[<i>].<node>`), in execution
 * order; `truncated` when items' steps were left out.
 */
export async function listStepsBounded(
  db: Knex,
  runId: string,
  maxItemSteps: number,
): Promise<{ steps: RunStepRow[]; truncated: boolean }> {
  const [outside, items] = await Promise.all([
    db('run_steps').where({ run_id: runId }).andWhereNot('node_id', 'like', '%[%').orderBy('id', 'asc'),
    db('run_steps')
      .where({ run_id: runId })
      .andWhere('node_id', 'like', '%[%')
      .orderBy('id', 'asc')
      .limit(maxItemSteps + 1),
  ]);
  const truncated = items.length > maxItemSteps;
  const steps = [...(outside as RunStepRow[]), ...(items as RunStepRow[]).slice(0, maxItemSteps)].map(stepFromDb);
  return { steps: steps.sort((a, b) => a.id - b.id), truncated };
}

const stepsOfRun = prepared<{ runId: string }>('run_steps_of_run', (db, param) =>
  db('run_steps')
    .where({ run_id: param('runId') })
    .orderBy('id', 'asc'),
);

const runWithDeletion = prepared<{ id: string; userId: number; workflowId: string }>(
  'run_with_workflow_deletion',
  (db, param) =>
    db('runs')
      .join('workflows', function () {
        this.on('workflows.id', '=', 'runs.workflow_id').andOn('workflows.user_id', '=', 'runs.user_id');
      })
      .select('runs.*', 'workflows.deleted_at as workflow_deleted_at')
      .where({ 'runs.id': param('id'), 'runs.user_id': param('userId'), 'runs.workflow_id': param('workflowId') })
      .first(),
);
