import { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';

export const RUN_QUEUE = 'workflow-runs';
const RETRY_LIMIT = 2;

export interface RunJobContext {
  /** 0 on the first delivery; more when pg-boss retries a job whose worker died or failed. */
  retryCount: number;
  /** No retry follows if this delivery fails too. */
  lastAttempt: boolean;
  /** Aborted when pg-boss gives up on the job (expiry) or the worker stops. */
  signal: AbortSignal;
}

export interface RunQueue {
  enqueue(runId: string): Promise<void>;
  work(handler: (runId: string, job: RunJobContext) => Promise<void>, options?: { concurrency?: number }): Promise<void>;
  health(): Promise<void>;
  stop(): Promise<void>;
}

export interface RunQueueOptions {
  url: string;
  logger: Logger;
  /** Upper bound of one run; a job held longer is expired by pg-boss and retried. */
  runTimeoutSeconds: number;
  /** How often pg-boss looks for jobs whose worker stopped sending heartbeats (default 5 s). */
  monitorIntervalSeconds?: number;
}

/**
 * The pg-boss queue that carries run ids to workers. Jobs wake idle workers by LISTEN/NOTIFY, so
 * a run starts in milliseconds; heartbeats let pg-boss notice a dead worker within seconds and
 * hand its job to another (the executor then finds the run half-done and finishes it clearly).
 */
export async function startRunQueue(options: RunQueueOptions): Promise<RunQueue> {
  // The monitor pass is what fails a job whose heartbeat stopped; pg-boss's default (60 s) would
  // leave a dead worker's run waiting a minute before its retry.
  const monitorIntervalSeconds = options.monitorIntervalSeconds ?? 5;
  const boss = new PgBoss({
    connectionString: options.url,
    useListenNotify: true,
    max: 10,
    monitorIntervalSeconds,
    superviseIntervalSeconds: monitorIntervalSeconds,
  });
  boss.on('error', (err: unknown) => options.logger.error({ err }, 'run queue error'));
  await boss.start();
  if (!(await boss.getQueue(RUN_QUEUE))) {
    await boss.createQueue(RUN_QUEUE, {
      // At most one queued-or-active job per run (singletonKey = run id): re-enqueueing a run
      // whose job still exists (the stuck-run sweep) is a no-op.
      policy: 'exclusive',
      notify: true,
      heartbeatSeconds: 10,
      retryLimit: RETRY_LIMIT,
      retryDelay: 1,
      expireInSeconds: options.runTimeoutSeconds + 30,
    });
  }
  return {
    async enqueue(runId) {
      await boss.send(RUN_QUEUE, { runId }, { singletonKey: runId });
    },
    async work(handler, { concurrency = 4 } = {}) {
      await boss.work<{ runId: string }>(
        RUN_QUEUE,
        {
          batchSize: 1,
          localConcurrency: concurrency,
          pollingIntervalSeconds: 2,
          // NOTIFY wakes workers for new jobs only; a retry (dead worker) is found by polling,
          // whose notify-mode default (30 s) would add half a minute to every recovery.
          notifyPollingIntervalSeconds: 2,
        },
        async ([job]) => {
          if (!job) return;
          await handler(job.data.runId, {
            retryCount: job.retryCount,
            lastAttempt: job.retryCount >= RETRY_LIMIT,
            signal: job.signal,
          });
        },
      );
    },
    async health() {
      await boss.getDb().executeSql('select 1');
    },
    async stop() {
      await boss.stop({ graceful: true, timeout: 15_000 });
    },
  };
}
