// The prepared statements of a run's life (src/db/prepared.ts): its insert, the quota's lock and
// count, its claim and its end. Both store adapters run them, PostgreSQL's one at a time in a
// transaction, MySQL's within one multi-statement round trip: building them with knex per call
// was about a tenth of the service's CPU under the runs load (docs/benchmarks-history.md).
import { prepared } from '../db/prepared.ts';
import type { NewRunRow, NewStepRow, RunEnd } from './store.ts';

export const RUN_COLUMNS = [
  'id',
  'workflow_id',
  'user_id',
  'status',
  'inputs',
  'graph',
  'output',
  'error',
  'usage',
  'idempotency_key',
  'attempts',
  'created_at',
  'started_at',
  'finished_at',
  'duration_ms',
  'retry_of',
  'access_token_id',
  'trace_context',
] as const satisfies readonly (keyof NewRunRow)[];

export const STEP_COLUMNS = [
  'run_id',
  'node_id',
  'node_type',
  'status',
  'started_at',
  'finished_at',
  'input_preview',
  'output_preview',
  'output_json',
  'truncated',
  'usage',
  'error',
  'attempts',
  'reused_from',
  'cost_nanos',
  'cost_input_nanos',
  'cost_currency',
  'chosen_case',
] as const satisfies readonly (keyof NewStepRow)[];

export const runInsert = prepared<{ [K in keyof NewRunRow]: NewRunRow[K] }>('run_insert', (db, param) =>
  db('runs').insert(Object.fromEntries(RUN_COLUMNS.map((c) => [c, param(c)]))),
);

/** The quota's lock: the user's row and the workflow's (its `deleted_at` says whether it stands). */
export const userAndWorkflowLock = prepared<{ userId: number; workflowId: string }, { deleted_at: unknown }>(
  'run_quota_user_and_workflow_lock',
  (db, param) =>
    db('users')
      .join('workflows', 'workflows.user_id', 'users.id')
      .where('users.id', param('userId'))
      .andWhere('workflows.id', param('workflowId'))
      .forUpdate()
      .first('workflows.deleted_at'),
);

/** The quota's count: the user's runs queued or running (the `status` index finds the few). */
export const unfinishedRunsOfUser = prepared<{ userId: number }, { active: number | string }>(
  'run_quota_unfinished_runs',
  (db, param) =>
    db('runs').where('user_id', param('userId')).whereIn('status', ['queued', 'running']).count({ active: '*' }),
);

export const runClaim = prepared<{ id: string; expectedAttempt: number; nextAttempt: number; now: number }>(
  'run_claim',
  (db, param) =>
    db('runs')
      .where({ id: param('id'), status: 'queued', attempts: param('expectedAttempt') })
      .update({ status: 'running', started_at: param('now'), attempts: param('nextAttempt') }),
);

export type RunFinishParams = RunEnd & {
  id: string;
  attempt: number;
  expectedAttempt: number;
  startedAt: number | null;
};

/** What a run's end sets, whichever state it ends the run from. */
const endOf = (param: (name: keyof RunFinishParams & string) => string) => ({
  status: param('status'),
  output: param('output'),
  error: param('error'),
  usage: param('usage'),
  cost_nanos: param('cost_nanos'),
  cost_input_nanos: param('cost_input_nanos'),
  cost_currency: param('cost_currency'),
  finished_at: param('finished_at'),
  duration_ms: param('duration_ms'),
});

/** The end of a run its attempt claimed: `running` with that attempt. */
export const runFinish = prepared<RunFinishParams>('run_finish', (db, param) =>
  db('runs')
    .where({ id: param('id'), status: 'running', attempts: param('attempt') })
    .update(endOf(param)),
);

/** The end of a run its attempt never claimed: still `queued` with the attempt before, started at `startedAt`. */
export const unclaimedRunFinish = prepared<RunFinishParams>('run_finish_unclaimed', (db, param) =>
  db('runs')
    .where({ id: param('id'), status: 'queued', attempts: param('expectedAttempt') })
    .update({ ...endOf(param), started_at: param('startedAt'), attempts: param('attempt') }),
);
