// Deliveries of run-ended callbacks: when a run ends, one message per callback of its workflow
// (callback_messages, its id the `webhook-id`), each delivered by a pg-boss job that POSTs the
// signed event through the outbound guard and is retried with exponential backoff for at least
// 24 hours (Svix retries over about a day too). Every attempt is recorded (callback_attempts).
//
// Deliveries are shared fairly (fairDeliveries.ts): each worker makes CALLBACK_CONCURRENCY at once,
// at most CALLBACK_USER_CONCURRENCY of them for one user and CALLBACK_ENDPOINT_CONCURRENCY for one
// callback (across workers), so one user's slow endpoints never hold up another's deliveries; each
// attempt gets CALLBACK_TIMEOUT_MS. A callback whose attempts keep failing (the pause rule) is
// paused: its messages stay pending, undelivered, until its owner re-enables it (callbacks.ts).
//
// Every run end goes through the queue's announceRunEnded (the worker's end, a cancel, the sweep
// of abandoned runs), so that is where deliveries are queued: the assembly (src/machinery.ts)
// wraps the run queue in announcingCallbacks. A process that dies between a run's end and that
// call is covered by the sweep: run ends of the last hour with no message, and messages whose job
// was never queued, are queued again (the message is unique per callback and run, and the job per
// message: nothing is sent twice for one end). One attempt at a message is deliveryAttempt.ts.
import type { PgBoss } from 'pg-boss';
import { allowListOf } from '../outbound/index.ts';
import { ulid } from '../shared/ids.ts';
import { findStoredRun, isTerminal } from '../runs/service.ts';
import * as store from './callbacks.store.ts';
import type { MessageRow } from './callbacks.store.ts';
import { deliver, type AttemptRules, type DeliveryContext } from './deliveryAttempt.ts';
import { startFairDeliveries, type DeliveryJobData, type FairDeliveries } from './fairDeliveries.ts';

export type { DeliveryContext } from './deliveryAttempt.ts';

export const CALLBACK_QUEUE = 'workflow-callbacks';

/** pg-boss's retry options: a failed delivery waits retryDelay * 2^n s (up to twice that, at most retryDelayMax) before the next. */
export interface CallbackRetry {
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  retryDelayMax?: number;
}

/** 15 attempts over at least 24.2 hours: 30 s, 1, 2, 4, 8, 16, 32, 64, 128 min, then every 4 h. */
export const CALLBACK_RETRY: CallbackRetry = {
  retryLimit: 14,
  retryDelay: 30,
  retryBackoff: true,
  retryDelayMax: 4 * 3600,
};

/** The shortest time pg-boss can take from the first attempt to the last under `policy` (its jitter only lengthens a delay). */
export function shortestRetrySpanSeconds(policy: CallbackRetry): number {
  let total = 0;
  for (let n = 0; n < policy.retryLimit; n++) {
    const delay = policy.retryBackoff ? Math.max(policy.retryDelay, 1) * 2 ** Math.min(16, n) : policy.retryDelay;
    total += policy.retryDelayMax === undefined ? delay : Math.min(policy.retryDelayMax, delay);
  }
  return total;
}

const POLLING_INTERVAL_MS = 1000;
/** Messages a re-enabled callback gets queued again at once; older ones stay pending (the sweep leaves them). */
const RESUME_LIMIT = 1000;
/** Run ends this recent are left to the process that ended them; the sweep looks back this far. */
const SWEEP_GRACE_MS = 15_000;
const SWEEP_WINDOW_MS = 3600_000;

export interface CallbackDeliveries {
  /** Queues a message for each callback of the ended run's workflow (once per callback and run). */
  runEnded(runId: string): Promise<void>;
  /** Delivers in this process (a worker; it needs the sealer to open the secrets). */
  work(): Promise<void>;
  /** Queues what a dead process left unqueued. */
  sweep(): Promise<void>;
  /** Stops delivering in this process, after the deliveries under way. */
  stop(): Promise<void>;
}

/** Queues a message's delivery job; the callback is the job's group: pg-boss bounds the deliveries under way per group (fairDeliveries.ts). */
function queueDelivery(boss: PgBoss, messageId: string, callback: { id: string; user_id: number }) {
  return boss.send(
    CALLBACK_QUEUE,
    { messageId, userId: callback.user_id, callbackId: callback.id } satisfies DeliveryJobData,
    { singletonKey: messageId, group: { id: callback.id } },
  );
}

/** The operator's limits of the delivery loop (fairDeliveries.ts). */
function fairnessOf(ctx: DeliveryContext, boss: PgBoss) {
  return {
    boss,
    queue: CALLBACK_QUEUE,
    logger: ctx.logger,
    slots: ctx.config.CALLBACK_CONCURRENCY,
    perUser: ctx.config.CALLBACK_USER_CONCURRENCY,
    perEndpoint: ctx.config.CALLBACK_ENDPOINT_CONCURRENCY,
    pollMs: POLLING_INTERVAL_MS,
    callbacksOfUsers: (userIds: number[]) => store.callbackIdsOfUsers(ctx.db, userIds),
  };
}

/** The operator's rules for each attempt (CALLBACK_TIMEOUT_MS, the allow-list, the pause rule). */
function attemptRulesOf(ctx: DeliveryContext): AttemptRules {
  return {
    policy: { allow: allowListOf(ctx.config.WORKFLOW_HTTP_ALLOW_HOSTS) },
    timeoutMs: ctx.config.CALLBACK_TIMEOUT_MS,
    pause: {
      failures: ctx.config.CALLBACK_PAUSE_AFTER_FAILURES,
      periodMs: ctx.config.CALLBACK_PAUSE_AFTER_SECONDS * 1000,
    },
  };
}

/** Queues a message for each callback of the ended run's workflow (once per callback and run). */
async function queueRunEnded(ctx: DeliveryContext, boss: PgBoss, runId: string): Promise<void> {
  // The callbacks first: a run of a workflow without any (most runs) costs this one read.
  const callbacks = await store.callbacksOfRun(ctx.db, runId);
  if (!callbacks.length) return;
  const run = await findStoredRun(ctx, runId);
  if (!run || !isTerminal(run.status)) return;
  for (const callback of callbacks) {
    if (callback.created_at > (run.finished_at ?? 0)) continue; // made after the run ended
    const message: MessageRow = {
      id: `msg_${ulid()}`,
      callback_id: callback.id,
      run_id: run.id,
      event_type: `run.${run.status}`,
      status: 'pending',
      attempts: 0,
      created_at: ctx.now(),
    };
    // A paused callback's message waits, pending, for its owner to re-enable it (resumeDeliveries).
    if ((await store.insertMessageOnce(ctx.db, message)) && callback.status === 'active')
      await queueDelivery(boss, message.id, callback);
  }
}

/** Queues what a dead process left unqueued: run ends without a message, messages without a job. */
async function sweepDeliveries(ctx: DeliveryContext, boss: PgBoss): Promise<void> {
  const now = ctx.now();
  for (const runId of await store.runEndsWithoutMessage(ctx.db, now - SWEEP_WINDOW_MS, now - SWEEP_GRACE_MS, 100))
    await queueRunEnded(ctx, boss, runId);
  for (const m of await store.messagesNeverAttempted(ctx.db, now - SWEEP_GRACE_MS * 4, 100))
    await queueDelivery(boss, m.id, { id: m.callback_id, user_id: m.user_id });
}

/** Queues again the messages a paused callback held back (it was just re-enabled), on the run queue's `boss`. */
export async function resumeDeliveries(
  ctx: Pick<DeliveryContext, 'db'>,
  boss: PgBoss,
  callbackId: string,
): Promise<void> {
  const found = await store.findCallback(ctx.db, callbackId);
  if (!found || found.status !== 'active') return;
  for (const id of await store.pendingMessagesOf(ctx.db, callbackId, RESUME_LIMIT))
    await queueDelivery(boss, id, found);
}

/** The callbacks' pg-boss queue on `boss` (the run queue's), made or brought up to date with `retry`. */
export async function startCallbackDeliveries(
  ctx: DeliveryContext,
  boss: PgBoss,
  retry: CallbackRetry = CALLBACK_RETRY,
): Promise<CallbackDeliveries> {
  const settings = { ...retry, expireInSeconds: Math.ceil(ctx.config.CALLBACK_TIMEOUT_MS / 1000) + 30 };
  // One queued-or-active job per message (singletonKey = message id): queueing again is a no-op.
  if (!(await boss.getQueue(CALLBACK_QUEUE)))
    await boss.createQueue(CALLBACK_QUEUE, { policy: 'exclusive', ...settings });
  else await boss.updateQueue(CALLBACK_QUEUE, settings);
  const rules = attemptRulesOf(ctx);
  let fair: FairDeliveries | undefined;
  return {
    runEnded: (runId) => queueRunEnded(ctx, boss, runId),
    async work() {
      const sealer = ctx.sealer;
      if (!sealer) throw new Error('callback deliveries need the sealer (SECRETS_KEY) to open the signing secrets');
      if (fair) return;
      fair = startFairDeliveries({ ...fairnessOf(ctx, boss), handle: (job) => deliver(ctx, rules, job, sealer) });
    },
    sweep: () => sweepDeliveries(ctx, boss),
    async stop() {
      await fair?.stop();
      fair = undefined;
    },
  };
}

/** `queue` whose announceRunEnded also queues the run's callbacks (a failure there is logged, never the run's). */
export function announcingCallbacks<Q extends { announceRunEnded(runId: string): Promise<void> }>(
  queue: Q,
  deliveries: CallbackDeliveries,
  ctx: DeliveryContext,
): Q {
  return {
    ...queue,
    async announceRunEnded(runId: string) {
      deliveries
        .runEnded(runId)
        .catch((err: unknown) =>
          ctx.logger.warn({ err, runId }, 'queueing run-ended callbacks failed; the sweep retries'),
        );
      await queue.announceRunEnded(runId);
    },
  };
}
