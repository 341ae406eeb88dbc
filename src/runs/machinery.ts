// Assembles the run machinery a process needs: the pg-boss queue, the model router and, when the
// process executes runs (the API by default, `npm run worker`), the worker. Used by main.ts,
// worker.ts and the test server, so all three run the same thing.
import type { Config } from '../config.ts';
import { demoProvider } from './providers/demo.ts';
import { createModelRouter, type ModelRouter } from './providers/index.ts';
import { startRunQueue, type RunQueue } from './queue.ts';
import { purgeDeletedWorkflows } from '../workflows/service.ts';
import { sharedRateLimiter, type SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { startScheduleTicks } from '../schedules/ticks.ts';
import { createRunner, sweepStuckRuns, SWEEP_INTERVAL_MS, type Runner, type RunnerContext } from './runner.ts';
import type { RunRow } from './store.ts';
import {
  announcingCallbacks,
  startCallbackDeliveries,
  type CallbackDeliveries,
  type CallbackRetry,
  type DeliveryContext,
} from '../hooks/deliveries.ts';
import { listenForRunEnds, type RunEndListener } from './waiting.ts';
import { SharedRunEvents } from './sharedEvents.ts';
import { StreamSlots } from './streamSlots.ts';
import { WaitSlots } from './waitSlots.ts';
import { purgeRuns, RUN_PURGE_INTERVAL_MS } from './retention.ts';

declare module '../context.ts' {
  interface AppContext {
    /** The run queue, model router and (when this process executes runs) worker; absent without a queue database. */
    runs?: RunMachinery;
  }
}

export interface RunMachinery {
  queue: RunQueue;
  models: ModelRouter;
  /** Set when this process executes runs. */
  runner: Runner | undefined;
  /**
   * Queues the run's job. If this process's worker takes it, it begins from `run` as given
   * (runner.ts expect) instead of reading it back: graph and inputs never change after the insert.
   */
  enqueue(run: RunRow): Promise<void>;
  /**
   * A listener to run ends for a `Prefer: wait` request (waiting.ts). A run this process's worker
   * ended comes with the run as the worker left it (runner.ts endedHere), so the request answers
   * without reading it back.
   */
  listenForRunEnds(): Promise<RunEndListener>;
  /** Run-ended callbacks' deliveries (a re-enabled callback's held-back messages are queued through it). */
  callbacks: CallbackDeliveries;
  /** The run event streams open on this process: their bounds, and their end when it stops. */
  streams: StreamSlots;
  /** The `Prefer: wait` requests held on this process, bounded per key and per user. */
  waits: WaitSlots;
  /** A run's new events, read once for all the streams of this process that follow it. */
  events: SharedRunEvents;
  /** Starts executing runs in this process (once). */
  startWorker(options?: { concurrency?: number }): Promise<void>;
  stop(): Promise<void>;
}

export function modelRouterFor(config: Config): ModelRouter {
  const models = config.MODEL_PROVIDER_MODELS;
  return createModelRouter(
    {
      MODEL_PROVIDER_BASE_URL: config.MODEL_PROVIDER_BASE_URL,
      MODEL_PROVIDER_API_KEY: config.MODEL_PROVIDER_API_KEY,
      // No list: every model `echo` (and the demo models) do not serve goes to the configured provider.
      MODEL_PROVIDER_MODELS: models.length ? [...models] : undefined,
    },
    config.DEMO_MODELS ? [demoProvider] : [],
  );
}

/**
 * `ctx.sealer` opens the callbacks' signing secrets (a process without it queues their deliveries
 * but makes none); `callbackRetry` replaces their retry policy (tests).
 */
export async function startRunMachinery(
  ctx: RunnerContext & Pick<DeliveryContext, 'sealer'>,
  options: { queueUrl: string; worker: boolean; monitorIntervalSeconds?: number; callbackRetry?: CallbackRetry },
): Promise<RunMachinery> {
  const { config, logger } = ctx;
  const runQueue = await startRunQueue({
    url: options.queueUrl,
    logger,
    runTimeoutSeconds: config.RUN_TIMEOUT_SECONDS,
    cronMonitorIntervalSeconds: config.SCHEDULE_CHECK_INTERVAL_SECONDS,
    ...(options.monitorIntervalSeconds ? { monitorIntervalSeconds: options.monitorIntervalSeconds } : {}),
  });
  const callbacks = await startCallbackDeliveries(ctx, runQueue.boss, options.callbackRetry);
  // Every run end is announced through the queue (worker, cancel, sweep): there its callbacks are queued.
  const queue = announcingCallbacks(runQueue, callbacks, ctx);
  const models = modelRouterFor(config);
  let sweeper: NodeJS.Timeout | undefined;
  let tickStarts: SharedRateLimiter | undefined;
  const machinery: RunMachinery = {
    queue,
    models,
    runner: undefined,
    callbacks,
    streams: new StreamSlots({ perKey: config.EVENT_STREAMS_PER_KEY, perUser: config.EVENT_STREAMS_PER_USER }),
    waits: new WaitSlots({ perKey: config.WAITS_PER_KEY, perUser: config.WAITS_PER_USER }),
    events: new SharedRunEvents(ctx.db, queue),
    async enqueue(run) {
      machinery.runner?.expect(run); // before the job exists: this process's worker may take it at once
      await queue.enqueue(run.id, String(run.user_id));
    },
    listenForRunEnds: () =>
      listenForRunEnds(
        (listener) => queue.watchRunEnded(listener),
        (runId) => machinery.runner?.endedHere(runId),
      ),
    async startWorker({ concurrency } = {}) {
      if (machinery.runner) return;
      const runner = createRunner(ctx, models, queue);
      machinery.runner = runner;
      const slots = concurrency ?? config.RUN_CONCURRENCY;
      // One user's runs hold at most their share of the slots: another user's run always finds one.
      const userSlots = config.USER_MAX_WORKER_SLOTS || Math.ceil(slots / 2);
      await queue.work((runId, job) => runner.handle(runId, job), { concurrency: slots, userSlots });
      if (ctx.sealer) await callbacks.work();
      const retentionMs = config.DELETED_WORKFLOW_RETENTION_SECONDS * 1000;
      let runsPurgedAt = ctx.now();
      let purgingRuns = false;
      sweeper = setInterval(() => {
        sweepStuckRuns(ctx, queue).catch((err: unknown) => logger.warn({ err }, 'stuck-run sweep failed'));
        callbacks.sweep().catch((err: unknown) => logger.warn({ err }, 'callback sweep failed'));
        // Deleted workflows past their retention are gone: remove them and their runs for good.
        purgeDeletedWorkflows(ctx, retentionMs).catch((err: unknown) => logger.warn({ err }, 'workflow purge failed'));
        // Finished runs past RUN_RETENTION_DAYS or their user's USER_MAX_STORED_RUNS (retention.ts), once a minute, one pass at a time.
        if (!purgingRuns && ctx.now() - runsPurgedAt >= RUN_PURGE_INTERVAL_MS) {
          purgingRuns = true;
          runsPurgedAt = ctx.now();
          purgeRuns(ctx)
            .catch((err: unknown) => logger.warn({ err }, 'run purge failed'))
            .finally(() => (purgingRuns = false));
        }
      }, SWEEP_INTERVAL_MS);
      sweeper.unref();
      // Schedules' ticks start runs here, counted against their owners' quotas with the API's
      // starts (the same shared counter: USER_RUNS_PER_MINUTE).
      tickStarts = sharedRateLimiter(ctx.db, logger, 'runs:', config.USER_RUNS_PER_MINUTE);
      await startScheduleTicks({ ...ctx, runs: machinery }, tickStarts);
    },
    async stop() {
      machinery.streams.endAll();
      clearInterval(sweeper);
      tickStarts?.stop();
      await callbacks.stop();
      await queue.stop();
    },
  };
  if (options.worker) await machinery.startWorker();
  return machinery;
}
