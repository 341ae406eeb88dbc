// The assembly of the run machinery with the domains that live beside it: the run queue, whose
// every run end (a worker's, a cancel, a sweep) also queues the run's callbacks (hooks/), the run
// worker (runs/), and beside the worker the callbacks' deliveries and the schedules' ticks. The
// composition happens here so that runs/ imports neither hooks/ nor schedules/, which import it.
// Used by main.ts, worker.ts and the test server, so all three run the same thing.
import { sharedRateLimiter, type SharedRateLimiter } from './http/sharedRateLimiter.ts';
import {
  announcingCallbacks,
  startCallbackDeliveries,
  type CallbackDeliveries,
  type CallbackRetry,
  type DeliveryContext,
} from './hooks/deliveries.ts';
import { createRunMachinery, type RunMachinery, type WorkerCompanion } from './runs/machinery.ts';
import { startRunQueue } from './runs/queue.ts';
import type { RunnerContext } from './runs/runner.ts';
import { startScheduleTicks } from './schedules/ticks.ts';

type MachineryContext = RunnerContext & Pick<DeliveryContext, 'sealer'>;

/** Run-ended callbacks' deliveries beside the worker: made only where the sealer opens their secrets. */
function callbackCompanion(ctx: MachineryContext, callbacks: CallbackDeliveries): WorkerCompanion {
  return {
    name: 'callback',
    start: async () => {
      if (ctx.sealer) await callbacks.work();
    },
    sweep: () => callbacks.sweep(),
    stop: () => callbacks.stop(),
  };
}

/**
 * Schedules' ticks beside the worker: they start runs, counted against their owners' quotas with
 * the API's starts (the same shared counter: USER_RUNS_PER_MINUTE).
 */
function scheduleCompanion(ctx: MachineryContext): WorkerCompanion {
  let tickStarts: SharedRateLimiter | undefined;
  return {
    name: 'schedule',
    async start(machinery: RunMachinery) {
      tickStarts = sharedRateLimiter(ctx.db, ctx.logger, 'runs:', ctx.config.USER_RUNS_PER_MINUTE);
      await startScheduleTicks({ ...ctx, runs: machinery }, tickStarts);
    },
    stop: async () => tickStarts?.stop(),
  };
}

/**
 * `ctx.sealer` opens the callbacks' signing secrets (a process without it queues their deliveries
 * but makes none); `callbackRetry` replaces their retry policy (tests).
 */
export async function startRunMachinery(
  ctx: MachineryContext,
  options: { queueUrl: string; worker: boolean; monitorIntervalSeconds?: number; callbackRetry?: CallbackRetry },
): Promise<RunMachinery> {
  const runQueue = await startRunQueue({
    url: options.queueUrl,
    logger: ctx.logger,
    runTimeoutSeconds: ctx.config.RUN_TIMEOUT_SECONDS,
    cronMonitorIntervalSeconds: ctx.config.SCHEDULE_CHECK_INTERVAL_SECONDS,
    ...(options.monitorIntervalSeconds ? { monitorIntervalSeconds: options.monitorIntervalSeconds } : {}),
  });
  const callbacks = await startCallbackDeliveries(ctx, runQueue.boss, options.callbackRetry);
  // Every run end is announced through the queue (worker, cancel, sweep): there its callbacks are queued.
  const queue = announcingCallbacks(runQueue, callbacks, ctx);
  const companions = [callbackCompanion(ctx, callbacks), scheduleCompanion(ctx)];
  return createRunMachinery(ctx, queue, companions, { worker: options.worker });
}
