// Rules of workflow schedules: the workflow must be the user's and live (404), the cron expression
// and time zone readable by pg-boss's scheduler (400 invalid_schedule), the inputs those of the
// workflow's (or the pinned version's) text_input variables (400), ticks no closer together than
// SCHEDULE_MIN_INTERVAL_SECONDS (400 invalid_schedule), at most 20 per workflow and
// USER_MAX_SCHEDULES per user (409 too_many_schedules).
// The store's row is the truth; pg-boss's schedule mirrors it (put after every write, removed
// when disabled or deleted). Ticks: ticks.ts.
import type { components } from '../../generated/api.d.ts';
import { invalidRunInputs, queueUnavailable, runsNotConfigured, workflowNotFound } from '../shared/errors.ts';
import { ulid } from '../shared/ids.ts';
import { checkInputs, type RunContext, type RunInputs } from '../runs/service.ts';
import { toText } from '../runs/values.ts';
import type { ScheduleQueue } from '../runs/scheduleQueue.ts';
import { findWorkflowForRuns, type PageMeta } from '../workflows/service.ts';
import { versionGraph } from '../workflows/versions.ts';
import { scheduleNotFound, tooManySchedules, tooManyUserSchedules } from './problems.ts';
import { checkRecurrence } from './recurrence.ts';
import * as store from './store.ts';
import type { ScheduleRow } from './store.ts';

export type Schedule = components['schemas']['Schedule'];
export type ScheduleCreate = components['schemas']['ScheduleCreate'];
export type ScheduleUpdate = components['schemas']['ScheduleUpdate'];

export const MAX_SCHEDULES_PER_WORKFLOW = 20;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function queueOf(ctx: RunContext): ScheduleQueue {
  if (!ctx.runs) throw runsNotConfigured();
  return ctx.runs.queue.schedules;
}

/** The next tick of an enabled schedule, as pg-boss's scheduler reads it; null when disabled or no queue. */
function nextTick(ctx: RunContext, row: ScheduleRow): string | null {
  if (!row.enabled || !ctx.runs) return null;
  try {
    return ctx.runs.queue.schedules.next(row.cron, row.timezone).toISOString();
  } catch {
    return null; // a row written before a rule changed: it never fires, and says so
  }
}

/** The stored inputs as the wire has them, as a run's: `inputs` as text, `input_values` when one is not a string. */
function inputsOf(stored: string): Pick<Schedule, 'inputs' | 'input_values'> {
  const values = JSON.parse(stored) as RunInputs;
  const entries = Object.entries(values);
  if (entries.every(([, v]) => typeof v === 'string')) return { inputs: values as Record<string, string> };
  return { inputs: Object.fromEntries(entries.map(([k, v]) => [k, toText(v)])), input_values: values };
}

/** The wire shape of a stored schedule (openapi.yaml Schedule). */
export function toSchedule(ctx: RunContext, row: ScheduleRow): Schedule {
  return {
    id: row.id,
    workflow_id: row.workflow_id,
    cron: row.cron,
    timezone: row.timezone,
    ...inputsOf(row.inputs),
    version: row.version,
    enabled: row.enabled,
    next_run_at: nextTick(ctx, row),
    last_run_id: row.last_run_id,
    last_run_at: iso(row.last_run_at),
    last_error: row.last_error,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** 404 unless the workflow is the user's and live; 404 for a pinned version it lacks; 400 for inputs its graph does not take. */
async function checkTarget(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  inputs: RunInputs,
  version: number | null,
) {
  const { workflow, deleted } = await findWorkflowForRuns(ctx, userId, workflowId);
  if (deleted) throw workflowNotFound(workflowId);
  const graph = version === null ? workflow : await versionGraph(ctx, userId, workflowId, version);
  const problems = checkInputs(graph.nodes, inputs);
  if (problems.length) throw invalidRunInputs(problems);
}

/** Mirrors the row into pg-boss: scheduled when enabled, unscheduled when not. */
async function mirror(
  queue: ScheduleQueue,
  row: Pick<ScheduleRow, 'id' | 'cron' | 'timezone' | 'enabled' | 'user_id'>,
): Promise<void> {
  if (row.enabled) await queue.put(row.id, row.cron, row.timezone, row.user_id);
  else await queue.remove(row.id);
}

export async function createSchedule(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  body: ScheduleCreate,
): Promise<Schedule> {
  const queue = queueOf(ctx);
  const timezone = body.timezone ?? 'UTC';
  const inputs = body.inputs ?? {};
  const version = body.version ?? null;
  await checkTarget(ctx, userId, workflowId, inputs, version);
  checkRecurrence(queue, body.cron, timezone, ctx.config.SCHEDULE_MIN_INTERVAL_SECONDS);
  if ((await store.countSchedules(ctx.db, userId, workflowId)) >= MAX_SCHEDULES_PER_WORKFLOW)
    throw tooManySchedules(MAX_SCHEDULES_PER_WORKFLOW);
  const perUser = ctx.config.USER_MAX_SCHEDULES;
  if ((await store.countUserSchedules(ctx.db, userId)) >= perUser) throw tooManyUserSchedules(perUser);
  const now = ctx.now();
  const row: ScheduleRow = {
    id: `sch_${ulid()}`,
    workflow_id: workflowId,
    user_id: userId,
    cron: body.cron,
    timezone,
    inputs: JSON.stringify(inputs),
    version,
    enabled: body.enabled ?? true,
    last_run_id: null,
    last_run_at: null,
    last_error: null,
    created_at: now,
    updated_at: now,
  };
  await store.insertSchedule(ctx.db, row);
  try {
    await mirror(queue, row);
  } catch (err) {
    ctx.logger.error({ err, scheduleId: row.id }, 'schedule: pg-boss write failed; the schedule is not created');
    await store.deleteSchedule(ctx.db, row.id);
    throw queueUnavailable();
  }
  return toSchedule(ctx, row);
}

async function ownSchedule(ctx: RunContext, userId: number, workflowId: string, id: string): Promise<ScheduleRow> {
  const { deleted } = await findWorkflowForRuns(ctx, userId, workflowId);
  if (deleted) throw workflowNotFound(workflowId);
  const row = await store.findSchedule(ctx.db, userId, workflowId, id);
  if (!row) throw scheduleNotFound(id);
  return row;
}

export async function getSchedule(ctx: RunContext, userId: number, workflowId: string, id: string): Promise<Schedule> {
  return toSchedule(ctx, await ownSchedule(ctx, userId, workflowId, id));
}

export async function listSchedules(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  request: { page: number; perPage: number },
): Promise<{ data: Schedule[]; meta: PageMeta }> {
  const { deleted } = await findWorkflowForRuns(ctx, userId, workflowId);
  if (deleted) throw workflowNotFound(workflowId);
  const [total, rows] = await Promise.all([
    store.countSchedules(ctx.db, userId, workflowId),
    store.listSchedulesNewestFirst(ctx.db, userId, workflowId, {
      offset: (request.page - 1) * request.perPage,
      limit: request.perPage,
    }),
  ]);
  return {
    data: rows.map((row) => toSchedule(ctx, row)),
    meta: { page: request.page, per_page: request.perPage, total, total_pages: Math.ceil(total / request.perPage) },
  };
}

export async function updateSchedule(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  id: string,
  body: ScheduleUpdate,
): Promise<Schedule> {
  const queue = queueOf(ctx);
  const current = await ownSchedule(ctx, userId, workflowId, id);
  const next: ScheduleRow = {
    ...current,
    ...(body.cron !== undefined && { cron: body.cron }),
    ...(body.timezone !== undefined && { timezone: body.timezone }),
    ...(body.inputs !== undefined && { inputs: JSON.stringify(body.inputs) }),
    ...(body.version !== undefined && { version: body.version }),
    ...(body.enabled !== undefined && { enabled: body.enabled }),
    updated_at: Math.max(ctx.now(), current.updated_at),
  };
  await checkTarget(ctx, userId, workflowId, JSON.parse(next.inputs) as RunInputs, next.version);
  checkRecurrence(queue, next.cron, next.timezone, ctx.config.SCHEDULE_MIN_INTERVAL_SECONDS);
  const { cron, timezone, inputs, version, enabled, updated_at } = next;
  await store.updateSchedule(ctx.db, id, { cron, timezone, inputs, version, enabled, updated_at });
  try {
    await mirror(queue, next);
  } catch (err) {
    // The row is changed; a worker's start puts every enabled row again (ticks.ts mirrorAll).
    ctx.logger.error({ err, scheduleId: id }, 'schedule: pg-boss write failed');
    throw queueUnavailable();
  }
  return toSchedule(ctx, next);
}

export async function deleteSchedule(ctx: RunContext, userId: number, workflowId: string, id: string): Promise<void> {
  const queue = queueOf(ctx);
  await ownSchedule(ctx, userId, workflowId, id);
  await store.deleteSchedule(ctx.db, id);
  // Its queued ticks go with it; a tick that comes anyway finds no row, starts nothing and unschedules it (ticks.ts).
  await queue
    .remove(id)
    .catch((err: unknown) => ctx.logger.warn({ err, scheduleId: id }, 'schedule: pg-boss unschedule failed'));
}

/**
 * A deleted workflow's schedules end with it, their queued ticks too (the app assembly calls this
 * once the workflow is deleted). A tick pg-boss sends anyway finds no row and starts nothing.
 */
export async function endSchedulesOfDeletedWorkflow(ctx: RunContext, workflowId: string): Promise<void> {
  for (const id of await store.scheduleIdsOfWorkflow(ctx.db, workflowId)) {
    await store.deleteSchedule(ctx.db, id);
    await ctx.runs?.queue.schedules
      .remove(id)
      .catch((err: unknown) => ctx.logger.warn({ err, scheduleId: id }, 'schedule: pg-boss unschedule failed'));
  }
}
