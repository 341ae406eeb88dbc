// Cron ticks of workflow schedules through pg-boss's scheduler. pg-boss keeps
// each schedule in its own table under (queue, key); one process a pass claims the due ticks
// (its `cron_on` claim) and files each tick's job under a singleton slot, so however many
// processes run the scheduler, a tick sends one job. `missed: 'once'`: after downtime, one job for
// the most recent missed tick, none for the older ones.
//
// Throughput and fairness: each process runs several tick handlers (`concurrency`), each taking a
// batch of due ticks at a time. A tick's job is in its owner's pg-boss group, and a user has at
// most `perUser` ticks in flight in a process (`localGroupConcurrency`: a fetch skips the ticks
// of a user at the cap, and hands back any it took past it), so the ticks of a user with many
// schedules wait behind each other, never in front of another user's.
import type { PgBoss } from 'pg-boss';

export const SCHEDULE_QUEUE = 'workflow-schedule-ticks';

/**
 * A tick's job may be retried (a store outage while it starts its run); its run's Idempotency-Key
 * makes a retry start none twice. Retries at most 10 s apart, so a tick whose store comes back fires
 * within about 10 s of it (a 60 s cap fired ticks ~30 s after an outage), for over two minutes.
 */
export const TICK_RETRY = { retryLimit: 15, retryDelay: 5, retryBackoff: true, retryDelayMax: 10 } as const;

/** Occurrences read to find a cron expression's shortest gap (pg-boss caps one read at 1,000 and a second). */
const GAP_SAMPLE = 16;

/** Queued ticks a removal deletes a page at a time; any past the last page find no schedule when taken and start nothing. */
const DROP_PAGE = 1000;
const MAX_DROP_PAGES = 10;

/** One tick's job as a handler sees it. */
export interface Tick {
  scheduleId: string;
  /** The job's id: one job per tick. */
  tickId: string;
  /** When the tick's job was filed (the tick came due), and when this handler took it: the queue database's clock. */
  createdOn: Date;
  startedOn: Date;
}

export interface TickWorkOptions {
  /** Tick handlers in this process. */
  concurrency: number;
  /** Ticks one handler takes at a time. */
  batchSize: number;
  /** Ticks of one user in flight at once. */
  perUser: number;
}

export interface ScheduleQueue {
  /** Creates or replaces the pg-boss schedule of `id` (its ticks in `userId`'s group). Throws on a cron expression or time zone pg-boss cannot read. */
  put(id: string, cron: string, timezone: string, userId: number): Promise<void>;
  /** Removes the pg-boss schedule of `id` and drops its ticks still queued. */
  remove(id: string): Promise<void>;
  /** The ids pg-boss has a schedule for. */
  ids(): Promise<string[]>;
  /** The next tick after `from` (default now); throws on a cron expression or time zone pg-boss cannot read. */
  next(cron: string, timezone: string, from?: Date): Date;
  /** The shortest time between two of the next ticks (milliseconds); Infinity when it fires at most once. */
  shortestGap(cron: string, timezone: string): number;
  /** Handles each tick's job in this process. A handler that throws fails that tick's job alone (pg-boss retries it). */
  work(handler: (tick: Tick) => Promise<void>, options: TickWorkOptions): Promise<void>;
}

/** The pg-boss group of a user's ticks. */
export const tickGroup = (userId: number) => `user:${userId}`;

export async function scheduleQueue(boss: PgBoss, name = SCHEDULE_QUEUE): Promise<ScheduleQueue> {
  if (!(await boss.getQueue(name))) await boss.createQueue(name, { ...TICK_RETRY });
  else await boss.updateQueue(name, { ...TICK_RETRY }); // a queue made by an older version keeps up with the retry policy
  return {
    async put(id, cron, timezone, userId) {
      await boss.schedule(
        name,
        cron,
        { scheduleId: id },
        { tz: timezone, key: id, missed: 'once', group: { id: tickGroup(userId) } },
      );
    },
    async remove(id) {
      await boss.unschedule(name, id);
      // Its ticks already filed would find no live schedule and start nothing; they go now instead.
      for (let pages = 0; pages < MAX_DROP_PAGES; pages++) {
        const queued = await boss.findJobs(name, { data: { scheduleId: id }, queued: true, limit: DROP_PAGE });
        if (queued.length)
          await boss.deleteJob(
            name,
            queued.map((job) => job.id),
          );
        if (queued.length < DROP_PAGE) break;
      }
    },
    async ids() {
      return (await boss.getSchedules(name)).map((s) => s.key);
    },
    next(cron, timezone, from) {
      const [next] = boss.previewSchedule(cron, { tz: timezone, count: 1, ...(from && { from }) });
      if (!next) throw new Error(`${cron} never comes`);
      return next;
    },
    shortestGap(cron, timezone) {
      const times = boss.previewSchedule(cron, { tz: timezone, count: GAP_SAMPLE }).map((d) => d.getTime());
      let gap = Infinity;
      for (let i = 1; i < times.length; i++) gap = Math.min(gap, times[i]! - times[i - 1]!);
      return gap;
    },
    async work(handler, { concurrency, batchSize, perUser }) {
      const options = {
        batchSize,
        localConcurrency: concurrency,
        localGroupConcurrency: perUser,
        pollingIntervalSeconds: 1,
        burstWhenBatchFull: true,
        includeMetadata: true,
        perJobResults: true,
      } as const;
      await boss.work<{ scheduleId: string }, unknown, typeof options>(name, options, async (jobs) =>
        Promise.all(
          jobs.map(async (job) => {
            try {
              await handler({
                scheduleId: job.data.scheduleId,
                tickId: job.id,
                createdOn: job.createdOn,
                startedOn: job.startedOn,
              });
              return { id: job.id, status: 'completed' as const };
            } catch (err) {
              return {
                id: job.id,
                status: 'failed' as const,
                output: { message: err instanceof Error ? err.message : String(err) },
              };
            }
          }),
        ),
      );
    },
  };
}
