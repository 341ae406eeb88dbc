// SQL of workflow schedules (migration 0016), named by intent. Rows are per user and workflow;
// the caller checks the workflow is the user's first.
import type { Knex } from 'knex';

export interface ScheduleRow {
  id: string;
  workflow_id: string;
  user_id: number;
  cron: string;
  timezone: string;
  /** JSON text of the inputs object. */
  inputs: string;
  version: number | null;
  enabled: boolean;
  last_run_id: string | null;
  last_run_at: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export type ScheduleChanges = Partial<Pick<ScheduleRow, 'cron' | 'timezone' | 'inputs' | 'version' | 'enabled'>>;

const COLUMNS = [
  'id',
  'workflow_id',
  'user_id',
  'cron',
  'timezone',
  'inputs',
  'version',
  'enabled',
  'last_run_id',
  'last_run_at',
  'last_error',
  'created_at',
  'updated_at',
];

function fromDb(row: ScheduleRow): ScheduleRow {
  const n = (v: unknown) => (v === null ? null : Number(v));
  return {
    ...row,
    user_id: Number(row.user_id),
    version: n(row.version),
    enabled: Boolean(row.enabled), // MySQL answers 0/1
    last_run_at: n(row.last_run_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

const ofWorkflow = (db: Knex, userId: number, workflowId: string) =>
  db<ScheduleRow>('workflow_schedules').where({ user_id: userId, workflow_id: workflowId });

export async function insertSchedule(db: Knex, row: ScheduleRow): Promise<void> {
  await db('workflow_schedules').insert(row);
}

export async function findSchedule(
  db: Knex,
  userId: number,
  workflowId: string,
  id: string,
): Promise<ScheduleRow | undefined> {
  const row = (await ofWorkflow(db, userId, workflowId).andWhere({ id }).first(COLUMNS)) as ScheduleRow | undefined;
  return row ? fromDb(row) : undefined;
}

/** A schedule by id alone: a tick knows nothing else. */
export async function findScheduleById(db: Knex, id: string): Promise<ScheduleRow | undefined> {
  const row = (await db('workflow_schedules').where({ id }).first(COLUMNS)) as ScheduleRow | undefined;
  return row ? fromDb(row) : undefined;
}

export async function countSchedules(db: Knex, userId: number, workflowId: string): Promise<number> {
  const result = (await ofWorkflow(db, userId, workflowId).count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(result?.n ?? 0);
}

/** One page of a workflow's schedules, newest first. */
export async function listSchedulesNewestFirst(
  db: Knex,
  userId: number,
  workflowId: string,
  page: { offset: number; limit: number },
): Promise<ScheduleRow[]> {
  const rows = (await ofWorkflow(db, userId, workflowId)
    .orderBy('seq', 'desc')
    .offset(page.offset)
    .limit(page.limit)
    .select(COLUMNS)) as ScheduleRow[];
  return rows.map(fromDb);
}

type Mirrored = Pick<ScheduleRow, 'id' | 'cron' | 'timezone' | 'user_id'>;

/** Every enabled schedule's id, cron, zone and owner (a worker mirrors them into pg-boss at start). */
export async function listEnabledSchedules(db: Knex): Promise<Mirrored[]> {
  const rows = (await db('workflow_schedules')
    .where({ enabled: true })
    .select('id', 'cron', 'timezone', 'user_id')) as Mirrored[];
  return rows.map((row) => ({ ...row, user_id: Number(row.user_id) }));
}

/** Schedules the user has across all their workflows. */
export async function countUserSchedules(db: Knex, userId: number): Promise<number> {
  const result = (await db('workflow_schedules').where({ user_id: userId }).count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(result?.n ?? 0);
}

/** The ids of a workflow's schedules (whoever reads them checked the workflow is the user's). */
export async function scheduleIdsOfWorkflow(db: Knex, workflowId: string): Promise<string[]> {
  return (await db('workflow_schedules').where({ workflow_id: workflowId }).pluck('id')) as string[];
}

export async function updateSchedule(
  db: Knex,
  id: string,
  changes: ScheduleChanges & { updated_at: number },
): Promise<void> {
  await db('workflow_schedules').where({ id }).update(changes);
}

/** What the last tick did: the run it started, or why it started none. */
export async function recordTick(
  db: Knex,
  id: string,
  tick: { last_run_at: number; last_run_id: string | null; last_error: string | null },
): Promise<void> {
  await db('workflow_schedules').where({ id }).update(tick);
}

export async function deleteSchedule(db: Knex, id: string): Promise<boolean> {
  return (await db('workflow_schedules').where({ id }).delete()) === 1;
}
