import { createHash } from 'node:crypto';
import { currentCarrier, type TraceCarrier, type TraceLink } from '../shared/tracing.ts';
import { PgBoss, type Db, type JobWithMetadata, type WipData } from 'pg-boss';
import type { Logger } from 'pino';
import { batched } from '../db/batched.ts';
import { QueueDb } from './queueDb.ts';
import { scheduleQueue, type ScheduleQueue } from './scheduleQueue.ts';

export const RUN_QUEUE = 'workflow-runs';
/**
 * Deliveries after the first. A delivery whose store stayed unreachable (an attempt already rides
 * out a minute of outage, see runner.ts) fails the job and is retried after a growing delay
 * (2, 4, 8, 16, 30 s, with jitter): a store or queue outage of a few minutes costs no run.
 */
const RETRY = { retryLimit: 5, retryDelay: 2, retryBackoff: true, retryDelayMax: 30 } as const;

/** Why the previous delivery of a job ended without completing it. */
export type DeliveryFailure = 'store_unavailable' | 'worker_lost';

/** The marker a handler's error carries when the store could not be reached (pg-boss keeps it as the job's output). */
export const STORE_UNAVAILABLE = 'store_unavailable';
/** NOTIFY channel on the queue database: the payload is the id of a run that just ended. */
const RUN_ENDED_CHANNEL = 'workflow_run_ended';
/** NOTIFY channel on the queue database: the payload is the id of a run whose events were just stored. */
const RUN_EVENTS_CHANNEL = 'workflow_run_events';

/** The most notices one statement sends; the rest wait for the next. */
const MAX_NOTICES_PER_STATEMENT = 32;

/**
 * NOTIFYs of one channel sent while one is under way go together in the next statement
 * (src/db/batched.ts): `SELECT pg_notify($1, $2), pg_notify($1, $3), ...`, one notice per run id,
 * in order, so every listener hears what it heard before. Each statement is a socket write and a
 * round trip of the service, and under load runs end a few at a time (docs/benchmarks-history.md).
 * PostgreSQL delivers a channel's notice once per payload per transaction, so a run announced twice
 * in one statement is heard once, which a waiter for its end cannot tell apart.
 */
const notify = batched(
  async (db: Db, notices: Array<{ channel: string; runId: string }>) => {
    const calls = notices.map((_, i) => `pg_notify($1, $${i + 2})`);
    await db.executeSql(`SELECT ${calls.join(', ')}`, [notices[0]!.channel, ...notices.map((n) => n.runId)]);
    return notices.map(() => undefined);
  },
  { keyOf: ({ channel }) => channel, max: MAX_NOTICES_PER_STATEMENT },
);

/** A run's job: its id, and the trace context it was queued in (when tracing). */
interface RunJobData {
  runId: string;
  trace?: TraceCarrier;
  /** The run's first span, when the run was resumed or retried (its trace continues another request). */
  link?: TraceLink;
}

export interface RunJobContext {
  /** 0 on the first delivery; more when pg-boss retries a job whose worker died or failed. */
  retryCount: number;
  /** No retry follows if this delivery fails too. */
  lastAttempt: boolean;
  /** Aborted when pg-boss gives up on the job (expiry) or the worker stops. */
  signal: AbortSignal;
  /** On a retry: why the previous delivery failed (its handler threw store_unavailable, or its worker went silent). */
  previousFailure?: DeliveryFailure | undefined;
  /** The trace context the run was queued in (empty without tracing). */
  carrier?: TraceCarrier | undefined;
  /** The run's first span, for a link, when the run was resumed or retried. */
  link?: TraceLink | undefined;
}

/** What the queue knows of a run's jobs: whether one is still queued or held, and how the last one failed. */
export interface RunJobState {
  live: boolean;
  lastFailure: DeliveryFailure | null;
}

export interface RunQueue {
  /** pg-boss on the queue database, for other kinds of job (run-ended callbacks, src/hooks/deliveries.ts). */
  readonly boss: PgBoss;
  /** Queues the run's job, in its owner's group (`userId`): a worker holds at most `userSlots` of one group's jobs at once. */
  enqueue(runId: string, userId?: string, link?: TraceLink): Promise<void>;
  /**
   * Executes runs, `concurrency` at once, of which at most `userSlots` of one user's (pg-boss's
   * localGroupConcurrency: a fetch passes over the jobs of a user at their share, so another
   * user's job is taken while theirs wait in the queue).
   */
  work(
    handler: (runId: string, job: RunJobContext) => Promise<void>,
    options?: { concurrency?: number; userSlots?: number },
  ): Promise<void>;
  /** The state of the run's jobs (the sweeper asks about runs that look stuck). */
  jobState(runId: string): Promise<RunJobState>;
  health(): Promise<void>;
  /**
   * Tells every process that the run ended (NOTIFY), so `Prefer: wait` requests answer at once:
   * this process's own without waiting for the NOTIFY to come back (so they hear of it twice).
   */
  announceRunEnded(runId: string): Promise<void>;
  /**
   * Calls `listener` with the id of each run that ends, in any process (and with null after the
   * listening connection was re-made, when notices may have been missed). Returns the unsubscribe.
   */
  watchRunEnded(listener: (runId: string | null) => void): Promise<() => void>;
  /** Tells every process that events of the run were stored (NOTIFY), so its event streams read them. */
  announceRunEvents(runId: string): Promise<void>;
  /** As watchRunEnded, for runs whose events were stored. */
  watchRunEvents(listener: (runId: string | null) => void): Promise<() => void>;
  /** Cron ticks of workflow schedules (pg-boss's scheduler, src/runs/scheduleQueue.ts). */
  schedules: ScheduleQueue;
  stop(): Promise<void>;
}

/** A failed delivery's cause from the output pg-boss stored: our handler's error, or its own expiry/heartbeat message. */
export function failureOf(output: unknown): DeliveryFailure | null {
  if (typeof output !== 'object' || output === null) return null;
  return (output as { code?: unknown }).code === STORE_UNAVAILABLE ? 'store_unavailable' : 'worker_lost';
}

export interface RunQueueOptions {
  url: string;
  logger: Logger;
  /** Upper bound of one run; a job held longer is expired by pg-boss and retried. */
  runTimeoutSeconds: number;
  /** How often pg-boss looks for jobs whose worker stopped sending heartbeats (default 5 s). */
  monitorIntervalSeconds?: number;
  /** How often pg-boss's scheduler looks for due cron ticks (SCHEDULE_CHECK_INTERVAL_SECONDS, 10 s by default). */
  cronMonitorIntervalSeconds?: number;
}

const SCHEMA = 'pgboss';
const POLLING_INTERVAL_SECONDS = 2;
/**
 * The channel a notify-enabled queue's inserts NOTIFY on, as pg-boss 12 names it for the schema
 * (`'pgboss_' || left(encode(sha224(schema), 'hex'), 24)`): we listen on it ourselves (see
 * startRunQueue). pg-boss does not export the name; src/runs/queue.test.ts fails if a job no longer
 * wakes a worker through it.
 */
export const JOB_CHANNEL = `pgboss_${createHash('sha224').update(SCHEMA).digest('hex').slice(0, 24)}`;

/** pg-boss over `db`, started, with the run queue made (or its retry policy brought up to date). */
async function startBoss(options: RunQueueOptions, db: QueueDb): Promise<PgBoss> {
  // The monitor pass is what fails a job whose heartbeat stopped; pg-boss's default (60 s) would
  // leave a dead worker's run waiting a minute before its retry.
  const monitorIntervalSeconds = options.monitorIntervalSeconds ?? 5;
  const boss = new PgBoss({
    db, // ours: its statements prepared once per connection (queueDb.ts)
    schema: SCHEMA,
    // Listening is ours (see startRunQueue); the queue's inserts still NOTIFY (`notify: true`).
    useListenNotify: false,
    monitorIntervalSeconds,
    superviseIntervalSeconds: monitorIntervalSeconds,
    ...(options.cronMonitorIntervalSeconds ? { cronMonitorIntervalSeconds: options.cronMonitorIntervalSeconds } : {}),
  });
  boss.on('error', (err: unknown) => options.logger.error({ err }, 'run queue error'));
  await boss.start();
  const settings = { notify: true, ...RETRY, expireInSeconds: options.runTimeoutSeconds + 30 };
  if (!(await boss.getQueue(RUN_QUEUE))) {
    await boss.createQueue(RUN_QUEUE, {
      // At most one queued-or-active job per run (singletonKey = run id): re-enqueueing a run
      // whose job still exists (the stuck-run sweep) is a no-op.
      policy: 'exclusive',
      heartbeatSeconds: 10,
      ...settings,
    });
  } else {
    await boss.updateQueue(RUN_QUEUE, settings); // a queue made by an older version keeps up with the retry policy
  }
  return boss;
}

/**
 * While a feed's LISTEN connection is away (a PostgreSQL outage, then a reconnect backoff of up to
 * 30 s), its watchers are told null this often: `Prefer: wait` requests and event streams re-read
 * the store, so a run's end reaches them within about this long of the store having it.
 */
export const FEED_AWAY_POLL_MS = 1000;

/**
 * One LISTEN connection per channel and process, opened with its first watcher, telling every
 * watcher each payload (a run id), and null after a reconnect and every FEED_AWAY_POLL_MS while
 * the connection is away (notices may have been missed).
 */
function channelFeed(db: QueueDb, logger: Logger, channel: string, what: { subject: string; consequence: string }) {
  const watchers = new Set<(runId: string | null) => void>();
  const tell = (runId: string | null) => {
    for (const w of watchers) w(runId);
  };
  let listening: Promise<{ close(): Promise<void> } | undefined> | undefined;
  return {
    tell,
    async watch(watcher: (runId: string | null) => void): Promise<() => void> {
      listening ??= db
        .listen(
          channel,
          (runId) => tell(runId),
          () => tell(null),
          { whileAwayMs: FEED_AWAY_POLL_MS },
        )
        .catch((err: unknown) => {
          logger.warn({ err }, `run queue: LISTEN for ${what.subject} failed; ${what.consequence}`);
          listening = undefined;
          return undefined;
        });
      watchers.add(watcher);
      await listening;
      return () => watchers.delete(watcher);
    },
    async close() {
      await (await listening)?.close();
      listening = undefined;
    },
  };
}

/**
 * Wakes this process's run workers: one for one new job, or all. A worker woken and not yet back
 * from its fetch still shows no job (pg-boss counts a worker's jobs once its fetch returns), yet it
 * takes one job only: woken again it would fetch the next only after that job's whole run, while
 * other workers idle and the job waits. So a job wakes an idle worker not woken since its last
 * fetch, else a busy one not woken since (it fetches again as soon as it is done), else any.
 */
function workerWaker(boss: PgBoss) {
  let next = 0;
  /** Date.now() when each worker was last woken (pg-boss's lastFetchedOn is Date.now() too). */
  const wokenAt = new Map<string, number>();
  const unwoken = (w: WipData) => {
    const at = wokenAt.get(w.id);
    return at === undefined || at < (w.lastFetchedOn ?? 0);
  };
  return {
    one() {
      const workers = boss.getWipData().filter((w: WipData) => w.name === RUN_QUEUE && w.state === 'active');
      if (!workers.length) return;
      const free = workers.filter(unwoken);
      const idle = free.filter((w) => w.count === 0);
      const pool = idle.length ? idle : free.length ? free : workers;
      const worker = pool[next++ % pool.length]!;
      wokenAt.set(worker.id, Date.now());
      boss.notifyWorker(worker.id);
    },
    /** After the listener (re)connects, notifications may have been missed: every worker fetches once. */
    all() {
      for (const w of boss.getWipData()) if (w.name === RUN_QUEUE) boss.notifyWorker(w.id);
    },
  };
}

/** A delivery of a run's job, as the runner's handler sees it. */
function jobContext(job: JobWithMetadata<RunJobData>): RunJobContext {
  return {
    retryCount: job.retryCount,
    lastAttempt: job.retryCount >= RETRY.retryLimit,
    signal: job.signal,
    previousFailure: job.retryCount > 0 ? (failureOf(job.output) ?? 'worker_lost') : undefined,
    carrier: job.data.trace,
    link: job.data.link,
  };
}

/** The state of a run's jobs: whether one is live, and the cause of the last that failed. */
async function jobStateOf(boss: PgBoss, runId: string): Promise<RunJobState> {
  const jobs = await boss.findJobs(RUN_QUEUE, { key: runId });
  const live = jobs.some((j) => j.state === 'created' || j.state === 'retry' || j.state === 'active');
  const failed = jobs.filter((j) => j.state === 'failed').sort((a, b) => +(b.completedOn ?? 0) - +(a.completedOn ?? 0));
  return { live, lastFailure: failed.length ? failureOf(failed[0]!.output) : null };
}

/** LISTENs on the channel the run queue's inserts NOTIFY on, waking a worker per new job; undefined when it cannot. */
async function listenForNewJobs(
  db: QueueDb,
  wake: ReturnType<typeof workerWaker>,
  logger: Logger,
): Promise<{ close(): Promise<void> } | undefined> {
  try {
    return await db.listen(
      JOB_CHANNEL,
      (queue) => queue === RUN_QUEUE && wake.one(),
      () => wake.all(),
    );
  } catch (err) {
    logger.warn({ err }, `run queue: LISTEN failed; new runs wait for the ${POLLING_INTERVAL_SECONDS} s poll`);
    return undefined;
  }
}

/**
 * The pg-boss queue that carries run ids to workers. A new job wakes one worker at once by
 * LISTEN/NOTIFY, so a run starts in milliseconds; heartbeats let pg-boss notice a dead worker
 * within seconds and hand its job to another (the executor then finds the run half-done and
 * finishes it clearly).
 *
 * pg-boss's own listener (`useListenNotify`) wakes every worker of the queue for every job: with
 * RUN_CONCURRENCY workers mostly idle, each job cost that many fetch queries, all but one empty.
 * So the process listens itself, on the channel the queue's inserts already NOTIFY, and wakes one
 * worker per job: an idle one if there is one, else a busy one, which then fetches again as soon
 * as it is done. Polling (2 s) stays the backstop, and finds retries of jobs whose worker died.
 */
export async function startRunQueue(options: RunQueueOptions): Promise<RunQueue> {
  // An idle connection that drops (a restart of PostgreSQL, a stop) is replaced by the pool on the
  // next call: nothing to warn of (a call that fails is logged by its caller).
  const db = new QueueDb({ connectionString: options.url, max: 10 }, (err) =>
    options.logger.debug({ err }, 'run queue: an idle connection closed'),
  );
  const boss = await startBoss(options, db).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  // Run ends wake `Prefer: wait` requests and event streams; stored events wake event streams.
  const ended = channelFeed(db, options.logger, RUN_ENDED_CHANNEL, {
    subject: 'run ends',
    consequence: 'Prefer: wait answers at its deadline',
  });
  const stored = channelFeed(db, options.logger, RUN_EVENTS_CHANNEL, {
    subject: 'run events',
    consequence: 'event streams wait for the run end',
  });
  const wake = workerWaker(boss);
  const schedules = await scheduleQueue(boss);
  let listener: { close(): Promise<void> } | undefined;
  return {
    boss,
    async enqueue(runId, userId, link) {
      // The W3C context of the request (or hook) that queues the run: its worker continues that
      // trace, linked to the run's first span when this is a resume or a retry.
      const carrier = currentCarrier();
      const data: RunJobData = carrier.traceparent ? { runId, trace: carrier } : { runId };
      if (link) data.link = link;
      await boss.send(RUN_QUEUE, data, { singletonKey: runId, ...(userId ? { group: { id: userId } } : {}) });
    },
    async work(handler, { concurrency = 4, userSlots } = {}) {
      const work = {
        batchSize: 1,
        localConcurrency: concurrency,
        ...(userSlots ? { localGroupConcurrency: Math.min(userSlots, concurrency) } : {}),
        pollingIntervalSeconds: POLLING_INTERVAL_SECONDS,
        includeMetadata: true as const,
      };
      // NOTIFY wakes workers for new jobs only; a retry (dead worker) is found by polling. A retried
      // job still carries the output of its failed delivery: its cause.
      await boss.work(RUN_QUEUE, work, async ([job]: JobWithMetadata<RunJobData>[]) => {
        if (job) await handler(job.data.runId, jobContext(job));
      });
      listener ??= await listenForNewJobs(db, wake, options.logger);
    },
    jobState: (runId) => jobStateOf(boss, runId),
    async health() {
      await db.executeSql('select 1');
    },
    async announceRunEnded(runId) {
      ended.tell(runId); // this process's waiters at once; the NOTIFY (heard here too) is for the others
      await notify(db, { channel: RUN_ENDED_CHANNEL, runId });
    },
    watchRunEnded: (watcher) => ended.watch(watcher),
    async announceRunEvents(runId) {
      await notify(db, { channel: RUN_EVENTS_CHANNEL, runId });
    },
    watchRunEvents: (watcher) => stored.watch(watcher),
    schedules,
    async stop() {
      await listener?.close();
      listener = undefined;
      await ended.close();
      await stored.close();
      await boss.stop({ graceful: true, timeout: 15_000 });
      await db.close(); // pg-boss closes only a pool it made
    },
  };
}
