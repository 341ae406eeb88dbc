// What a schedule's tick does, in a process that executes runs: start one run of the schedule's
// workflow through the same path and quotas as an API start (src/runs/service.ts startRun). pg-boss
// sends one job per tick across every process (src/runs/scheduleQueue.ts), and the job's id is the
// run's Idempotency-Key, so a redelivered job (a store outage, a worker lost mid-start) returns the
// run it started instead of starting another.
//
// No backlog: a tick taken after its schedule's next tick came due is skipped (a newer one is filed
// or on its way), so a schedule is at most one tick behind; pg-boss's `missed: 'once'` files at
// most one catch-up after downtime. A tick of a schedule deleted or disabled since starts nothing.
import type { SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { countScheduleTick } from '../ops/metrics.ts';
import { Problem } from '../shared/errors.ts';
import { inSpan, ROOT_CONTEXT } from '../shared/tracing.ts';
import { startRun, type RunContext } from '../runs/service.ts';
import type { Tick } from '../runs/scheduleQueue.ts';
import { isLateTick } from './recurrence.ts';
import * as store from './store.ts';

type TickContext = RunContext & { runs: NonNullable<RunContext['runs']> };

/** When a tick's job was filed and taken (both by the queue database's clock); absent: taken as it came due. */
export type TickTiming = Pick<Tick, 'createdOn' | 'startedOn'>;

export async function runTick(
  ctx: TickContext,
  runStarts: Pick<SharedRateLimiter, 'hit'>,
  scheduleId: string,
  tickId: string,
  timing?: TickTiming,
): Promise<void> {
  const schedules = ctx.runs.queue.schedules;
  const schedule = await store.findScheduleById(ctx.db, scheduleId);
  if (!schedule || !schedule.enabled) {
    // Deleted or disabled since pg-boss was told (or telling it failed): no run, and no more ticks.
    await schedules.remove(scheduleId);
    return;
  }
  if (timing && isLateTick(ctx.runs.queue.schedules, schedule, timing)) {
    const lateSeconds = Math.round((timing.startedOn.getTime() - timing.createdOn.getTime()) / 1000);
    ctx.logger.warn(
      { scheduleId, tickId, lateSeconds },
      'schedule tick skipped: its next tick came due before it started',
    );
    countScheduleTick('skipped_late');
    return;
  }
  const at = ctx.now();
  const inputs = JSON.parse(schedule.inputs) as Record<string, unknown>; // JSON values, of each input's type
  try {
    const { run } = await startRun(
      ctx,
      schedule.user_id,
      schedule.workflow_id,
      inputs,
      `schedule-${tickId}`,
      runStarts,
      schedule.version ?? undefined,
    );
    await store.recordTick(ctx.db, scheduleId, { last_run_at: at, last_run_id: run.id, last_error: null });
    countScheduleTick('started');
  } catch (err) {
    if (!(err instanceof Problem) || err.status >= 500) throw err; // pg-boss retries the tick's job
    if (err.code === 'workflow_not_found') {
      // The workflow was deleted: its schedules end with it.
      await store.deleteSchedule(ctx.db, scheduleId);
      await schedules.remove(scheduleId);
      return;
    }
    // A quota, inputs the workflow no longer takes, a pinned version gone: this tick starts nothing, and says why.
    ctx.logger.warn({ scheduleId, code: err.code }, 'schedule tick started no run');
    await store.recordTick(ctx.db, scheduleId, { last_run_at: at, last_run_id: null, last_error: err.message });
    countScheduleTick('refused');
  }
}

/**
 * Handles ticks in this process. First puts every enabled schedule into pg-boss again, so a write
 * to pg-boss that failed after its row changed (createSchedule undoes its row; updateSchedule
 * cannot) is repaired by the next worker start, and drops pg-boss schedules without a row.
 */
export async function startScheduleTicks(ctx: TickContext, runStarts: Pick<SharedRateLimiter, 'hit'>): Promise<void> {
  const schedules = ctx.runs.queue.schedules;
  const enabled = await store.listEnabledSchedules(ctx.db);
  const wanted = new Set(enabled.map((s) => s.id));
  for (const s of enabled) {
    await schedules
      .put(s.id, s.cron, s.timezone, s.user_id)
      .catch((err: unknown) => ctx.logger.warn({ err, scheduleId: s.id }, 'schedule: cannot be put into pg-boss'));
  }
  for (const id of await schedules.ids()) if (!wanted.has(id)) await schedules.remove(id);
  const { SCHEDULE_TICK_CONCURRENCY, SCHEDULE_TICK_BATCH_SIZE, SCHEDULE_TICKS_PER_USER } = ctx.config;
  // Each tick a trace of its own (no request started it), which the run it starts continues.
  const traced = (tick: Parameters<Parameters<typeof schedules.work>[0]>[0]) =>
    inSpan('schedule tick', { parent: ROOT_CONTEXT, attributes: { 'schedule.id': tick.scheduleId } }, () =>
      runTick(ctx, runStarts, tick.scheduleId, tick.tickId, tick),
    );
  await schedules.work(traced, {
    concurrency: SCHEDULE_TICK_CONCURRENCY,
    batchSize: SCHEDULE_TICK_BATCH_SIZE,
    perUser: SCHEDULE_TICKS_PER_USER,
  });
}
