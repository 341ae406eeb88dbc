// The calendar rules of schedules, read through pg-boss's scheduler (its cron and time zones) and
// nothing else: which recurrences a schedule may have, and when a tick is too late to start a run.
import type { ScheduleQueue, Tick } from '../runs/scheduleQueue.ts';
import { invalidSchedule } from './problems.ts';

/** What the rules read of the schedule queue: its cron calendar. */
export type Calendar = Pick<ScheduleQueue, 'next' | 'shortestGap'>;

/** When a tick's job was filed and taken (both by the queue database's clock). */
type TickTimes = Pick<Tick, 'createdOn' | 'startedOn'>;

/**
 * 400 unless pg-boss's scheduler can read the zone (an IANA name) and the cron expression in it,
 * and its ticks come no closer together than `minSeconds` (read over its next occurrences).
 */
export function checkRecurrence(queue: Calendar, cron: string, timezone: string, minSeconds: number): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw invalidSchedule('/body/timezone', `${JSON.stringify(timezone)} is not an IANA time zone`);
  }
  try {
    queue.next(cron, timezone);
  } catch (err) {
    throw invalidSchedule('/body/cron', err instanceof Error ? err.message : 'is not a cron expression');
  }
  const gap = queue.shortestGap(cron, timezone);
  if (gap < minSeconds * 1000) {
    throw invalidSchedule(
      '/body/cron',
      `ticks ${gap / 1000} s apart; the shortest interval allowed is ${minSeconds} s (SCHEDULE_MIN_INTERVAL_SECONDS)`,
    );
  }
}

/**
 * True when the schedule's next tick after this one had come due before this one was taken (a
 * newer tick is filed or on its way: no backlog).
 */
export function isLateTick(
  calendar: Pick<Calendar, 'next'>,
  schedule: { cron: string; timezone: string },
  timing: TickTimes,
): boolean {
  try {
    return calendar.next(schedule.cron, schedule.timezone, timing.createdOn).getTime() <= timing.startedOn.getTime();
  } catch {
    return false; // an expression that no longer reads: the row's own problem, said elsewhere
  }
}
