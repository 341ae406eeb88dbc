// The callbacks' delivery loop: a worker's delivery slots shared fairly between users. pg-boss's
// `work()` takes jobs first come, first served, so one user's slow endpoints (each attempt up to
// the timeout) could hold every slot while another user's deliveries waited behind them. Here
// each job carries its callback as its pg-boss group, and the loop fetches one job at a time:
//
// - per endpoint: `groupConcurrency` makes pg-boss skip a callback with as many deliveries under
//   way as allowed, across every worker process (it counts active jobs per group in the queue);
// - per user: a user with as many deliveries under way in this process as allowed has their
//   callbacks passed as `ignoreGroups`, so the fetch skips them and takes another user's job.
//
// A skipped job is not touched: it stays queued, no attempt is spent, and the next fetch after a
// slot frees can take it. No slot ever waits for a user's or an endpoint's turn.
import type { JobWithMetadata, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';

export interface DeliveryJobData {
  messageId: string;
  /** Absent on jobs queued before deliveries were shared fairly: those count as one unknown user. */
  userId?: number;
  callbackId?: string;
}

export interface FairDeliveryOptions {
  boss: PgBoss;
  queue: string;
  logger: Pick<Logger, 'warn'>;
  /** Deliveries this process makes at once. */
  slots: number;
  /** Of those, deliveries one user's callbacks may take. */
  perUser: number;
  /** Deliveries to one callback under way at once, across processes. */
  perEndpoint: number;
  /** How long the loop sleeps when it found nothing it may take (a freed slot wakes it sooner). */
  pollMs: number;
  /** The callbacks of these users: the groups to skip while they are at their limit. */
  callbacksOfUsers(userIds: number[]): Promise<string[]>;
  /** One attempt; throws when pg-boss should retry the job. */
  handle(job: JobWithMetadata<DeliveryJobData>): Promise<void>;
}

export interface FairDeliveries {
  /** Deliveries under way in this process, per user (tests and metrics). */
  underWay(): ReadonlyMap<number, number>;
  /** Stops fetching, then waits for the deliveries under way. */
  stop(): Promise<void>;
}

const UNKNOWN_USER = -1;

/** A sleep that `wake()` ends early (a freed slot, a stop). */
function napper() {
  let wake: (() => void) | undefined;
  return {
    nap: (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      }),
    wake: () => wake?.(),
  };
}

export function startFairDeliveries(options: FairDeliveryOptions): FairDeliveries {
  const { boss, queue, logger } = options;
  const perUser = Math.min(options.perUser, options.slots);
  const byUser = new Map<number, number>();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const { nap, wake } = napper();

  function begin(job: JobWithMetadata<DeliveryJobData>): void {
    const user = job.data.userId ?? UNKNOWN_USER;
    byUser.set(user, (byUser.get(user) ?? 0) + 1);
    const delivery = (async () => {
      try {
        await options.handle(job);
        await boss.complete(queue, job);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        await boss
          .fail(queue, job, { message })
          .catch((failErr: unknown) =>
            logger.warn({ err: failErr, jobId: job.id }, 'failing a callback job failed; pg-boss expires it'),
          );
      } finally {
        const left = (byUser.get(user) ?? 1) - 1;
        if (left > 0) byUser.set(user, left);
        else byUser.delete(user);
        wake();
      }
    })();
    inFlight.add(delivery);
    void delivery.finally(() => inFlight.delete(delivery));
  }

  async function fetchOne(): Promise<JobWithMetadata<DeliveryJobData> | undefined> {
    const saturated = [...byUser].filter(([, n]) => n >= perUser).map(([user]) => user);
    // Jobs queued before groups (no user in them) are few and go out as they come.
    const known = saturated.filter((user) => user !== UNKNOWN_USER);
    const ignoreGroups = known.length ? await options.callbacksOfUsers(known) : [];
    const jobs = await boss.fetch<DeliveryJobData>(queue, {
      batchSize: 1,
      includeMetadata: true,
      groupConcurrency: options.perEndpoint,
      ...(ignoreGroups.length ? { ignoreGroups } : {}),
    });
    return jobs[0];
  }

  const loop = (async () => {
    while (!stopped) {
      const running = [...byUser.values()].reduce((a, b) => a + b, 0);
      if (running >= options.slots) {
        await nap(options.pollMs);
        continue;
      }
      let job: JobWithMetadata<DeliveryJobData> | undefined;
      try {
        job = await fetchOne();
      } catch (err) {
        if (stopped) break;
        logger.warn({ err }, 'fetching callback deliveries failed; trying again');
      }
      if (job) begin(job);
      else await nap(options.pollMs);
    }
  })();

  return {
    underWay: () => byUser,
    async stop() {
      stopped = true;
      wake();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
