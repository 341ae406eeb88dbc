// Cron ticks of workflow schedules through pg-boss's scheduler (issue 34 item 3). pg-boss keeps
// each schedule in its own table under (queue, key); one process a pass claims the due ticks
// (its `cron_on` claim) and files each tick's job under a singleton slot, so however many
// processes run the scheduler, a tick sends one job. `missed: 'once'`: after downtime, one job for
// the most recent missed tick, none for the older ones.
import type { PgBoss } from 'pg-boss';

export const SCHEDULE_QUEUE = 'workflow-schedule-ticks';

/** A tick's job may be retried (a store outage while it starts its run); its run's Idempotency-Key makes a retry start none twice. */
const TICK_RETRY = { retryLimit: 5, retryDelay: 5, retryBackoff: true, retryDelayMax: 60 } as const;

export interface ScheduleQueue {
  /** Creates or replaces the pg-boss schedule of `id`. Throws on a cron expression or time zone pg-boss cannot read. */
  put(id: string, cron: string, timezone: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** The ids pg-boss has a schedule for. */
  ids(): Promise<string[]>;
  /** The next tick after now; throws on a cron expression or time zone pg-boss cannot read. */
  next(cron: string, timezone: string): Date;
  /** Handles each tick's job in this process: the schedule's id and the job's id (one job per tick). */
  work(handler: (scheduleId: string, tickId: string) => Promise<void>): Promise<void>;
}

export async function scheduleQueue(boss: PgBoss): Promise<ScheduleQueue> {
  if (!(await boss.getQueue(SCHEDULE_QUEUE))) await boss.createQueue(SCHEDULE_QUEUE, { ...TICK_RETRY });
  return {
    async put(id, cron, timezone) {
      await boss.schedule(SCHEDULE_QUEUE, cron, { scheduleId: id }, { tz: timezone, key: id, missed: 'once' });
    },
    async remove(id) {
      await boss.unschedule(SCHEDULE_QUEUE, id);
    },
    async ids() {
      return (await boss.getSchedules(SCHEDULE_QUEUE)).map((s) => s.key);
    },
    next(cron, timezone) {
      const [next] = boss.previewSchedule(cron, { tz: timezone, count: 1 });
      if (!next) throw new Error(`${cron} never comes`);
      return next;
    },
    async work(handler) {
      await boss.work<{ scheduleId: string }>(SCHEDULE_QUEUE, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
        if (job) await handler(job.data.scheduleId, job.id);
      });
    },
  };
}
