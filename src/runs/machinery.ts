// The run machinery a process needs: the pg-boss queue, the model router and, when the process
// executes runs (the API by default, `npm run worker`), the worker with its sweeps. What other
// domains run beside the worker (run-ended callbacks, schedules' ticks) comes in as companions
// from the assembly (src/machinery.ts), so runs/ imports none of them.
import type { TraceLink } from '../shared/tracing.ts';
import type { Config } from '../config.ts';
import { demoProvider } from './providers/demo.ts';
import { createModelRouter, type ModelRouter } from './providers/index.ts';
import type { RunQueue } from './queue.ts';
import { purgeDeletedWorkflows } from '../workflows/service.ts';
import { createRunner, sweepStuckRuns, SWEEP_INTERVAL_MS, type Runner, type RunnerContext } from './runner.ts';
import type { RunRow } from './store.ts';
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
  enqueue(run: RunRow, link?: TraceLink): Promise<void>;
  /**
   * A listener to run ends for a `Prefer: wait` request (waiting.ts). A run this process's worker
   * ended comes with the run as the worker left it (runner.ts endedHere), so the request answers
   * without reading it back.
   */
  listenForRunEnds(): Promise<RunEndListener>;
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

/**
 * Another domain's work that lives with this process's worker (run-ended callbacks' deliveries,
 * schedules' ticks): started after the worker, swept with it, stopped before the queue.
 */
export interface WorkerCompanion {
  /** Names it in the log when its sweep fails ("callback sweep failed"). */
  name: string;
  /** Starts it in this process, once the worker takes runs. */
  start?(machinery: RunMachinery): Promise<void>;
  /** Runs at each of the worker's sweeps (SWEEP_INTERVAL_MS). */
  sweep?(): Promise<void>;
  /** Stops it when the machinery stops, whether or not the worker started. */
  stop?(): Promise<void>;
}

export function modelRouterFor(config: Config): ModelRouter {
  const models = config.MODEL_PROVIDER_MODELS;
  return createModelRouter(
    {
      MODEL_PROVIDER_BASE_URL: config.MODEL_PROVIDER_BASE_URL,
      MODEL_PROVIDER_API_KEY: config.MODEL_PROVIDER_API_KEY,
      // No list: every model `echo` (and the demo models) do not serve goes to the configured provider.
      MODEL_PROVIDER_MODELS: models.length ? [...models] : undefined,
      MODEL_PRICES: config.MODEL_PRICES,
    },
    config.DEMO_MODELS ? [demoProvider] : [],
  );
}

/**
 * The run machinery over `queue` (started by the assembly, which may wrap it: every run end is
 * announced through it), with `companions` beside the worker.
 */
export async function createRunMachinery(
  ctx: RunnerContext,
  queue: RunQueue,
  companions: readonly WorkerCompanion[],
  options: { worker: boolean },
): Promise<RunMachinery> {
  const { config, logger } = ctx;
  const models = modelRouterFor(config);
  let sweeper: NodeJS.Timeout | undefined;
  const machinery: RunMachinery = {
    queue,
    models,
    runner: undefined,
    streams: new StreamSlots({ perKey: config.EVENT_STREAMS_PER_KEY, perUser: config.EVENT_STREAMS_PER_USER }),
    waits: new WaitSlots({ perKey: config.WAITS_PER_KEY, perUser: config.WAITS_PER_USER }),
    events: new SharedRunEvents(ctx.db, queue),
    async enqueue(run, link) {
      machinery.runner?.expect(run); // before the job exists: this process's worker may take it at once
      await queue.enqueue(run.id, String(run.user_id), link);
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
      const retentionMs = config.DELETED_WORKFLOW_RETENTION_SECONDS * 1000;
      let runsPurgedAt = ctx.now();
      let purgingRuns = false;
      sweeper = setInterval(() => {
        sweepStuckRuns(ctx, queue).catch((err: unknown) => logger.warn({ err }, 'stuck-run sweep failed'));
        for (const companion of companions)
          companion.sweep?.().catch((err: unknown) => logger.warn({ err }, `${companion.name} sweep failed`));
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
      for (const companion of companions) await companion.start?.(machinery);
    },
    async stop() {
      machinery.streams.endAll();
      clearInterval(sweeper);
      for (const companion of [...companions].reverse()) await companion.stop?.();
      await queue.stop();
    },
  };
  if (options.worker) await machinery.startWorker();
  return machinery;
}
