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
// of abandoned runs), so that is where deliveries are queued (announcingCallbacks). A process that
// dies between a run's end and that call is covered by the sweep: run ends of the last hour with no
// message, and messages whose job was never queued, are queued again (the message is unique per
// callback and run, and the job per message: nothing is sent twice for one end).
import type { JobWithMetadata, PgBoss } from 'pg-boss';
import type { AppContext } from '../context.ts';
import { allowListOf, OutboundError, outboundRequest, type OutboundPolicy } from '../outbound/index.ts';
import { ulid } from '../shared/ids.ts';
import type { Sealer } from '../shared/sealing.ts';
import { toRun } from '../runs/service.ts';
import { findRun, isTerminal, type RunRow } from '../runs/store.ts';
import { secretContext } from './callbacks.ts';
import * as store from './callbacks.store.ts';
import type { MessageRow } from './callbacks.store.ts';
import { startFairDeliveries, type DeliveryJobData, type FairDeliveries } from './fairDeliveries.ts';
import { webhookHeaders } from './signing.ts';

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

/** The receiver's answer is not kept; a larger one only fails the attempt. */
const MAX_ANSWER_BYTES = 64 * 1024;
const POLLING_INTERVAL_MS = 1000;
/** Messages a re-enabled callback gets queued again at once; older ones stay pending (the sweep leaves them). */
const RESUME_LIMIT = 1000;
/** Run ends this recent are left to the process that ended them; the sweep looks back this far. */
const SWEEP_GRACE_MS = 15_000;
const SWEEP_WINDOW_MS = 3600_000;

export type DeliveryContext = Pick<AppContext, 'db' | 'config' | 'logger' | 'now'> & { sealer?: Sealer | undefined };

export interface CallbackDeliveries {
  /** Queues a message for each callback of the ended run's workflow (once per callback and run). */
  runEnded(runId: string): Promise<void>;
  /** Delivers in this process (a worker; it needs the sealer to open the secrets). */
  work(): Promise<void>;
  /** Queues what a dead process left unqueued. */
  sweep(): Promise<void>;
  /** Queues again the messages a paused callback held back (it was just re-enabled). */
  resume(callbackId: string): Promise<void>;
  /** Stops delivering in this process, after the deliveries under way. */
  stop(): Promise<void>;
}

/** The event a callback receives: Standard Webhooks' `{type, timestamp, data}`, the run as getRun has it without logs. */
export function eventOf(run: RunRow, eventType: string): string {
  return JSON.stringify({
    type: eventType,
    timestamp: new Date(run.finished_at ?? run.created_at).toISOString(),
    data: toRun(run),
  });
}

interface AttemptOutcome {
  status: 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
}

/** POSTs one attempt through the outbound guard: any 2xx is a delivery; no redirect is followed. */
async function post(
  policy: OutboundPolicy,
  timeoutMs: number,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptOutcome> {
  try {
    const res = await outboundRequest(policy, {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'user-agent': 'openauth-workflows-webhooks/1', ...headers },
      body,
      timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      maxRedirects: 0,
    });
    if (res.status >= 200 && res.status < 300) return { status: 'succeeded', response_status: res.status, error: null };
    return { status: 'failed', response_status: res.status, error: `The endpoint answered ${res.status}.` };
  } catch (err) {
    if (err instanceof OutboundError)
      return { status: 'failed', response_status: null, error: `${err.code}: ${err.message}` };
    throw err;
  }
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

/** The callbacks' pg-boss queue on `boss` (the run queue's), made or brought up to date with `retry`. */
export async function startCallbackDeliveries(
  ctx: DeliveryContext,
  boss: PgBoss,
  retry: CallbackRetry = CALLBACK_RETRY,
): Promise<CallbackDeliveries> {
  const timeoutMs = ctx.config.CALLBACK_TIMEOUT_MS;
  const settings = { ...retry, expireInSeconds: Math.ceil(timeoutMs / 1000) + 30 };
  // One queued-or-active job per message (singletonKey = message id): queueing again is a no-op.
  if (!(await boss.getQueue(CALLBACK_QUEUE)))
    await boss.createQueue(CALLBACK_QUEUE, { policy: 'exclusive', ...settings });
  else await boss.updateQueue(CALLBACK_QUEUE, settings);
  const policy: OutboundPolicy = { allow: allowListOf(ctx.config.WORKFLOW_HTTP_ALLOW_HOSTS) };
  const pause = {
    failures: ctx.config.CALLBACK_PAUSE_AFTER_FAILURES,
    periodMs: ctx.config.CALLBACK_PAUSE_AFTER_SECONDS * 1000,
  };
  // The callback is the job's group: pg-boss bounds the deliveries under way per group (fairDeliveries.ts).
  const send = (messageId: string, callback: { id: string; user_id: number }) =>
    boss.send(
      CALLBACK_QUEUE,
      { messageId, userId: callback.user_id, callbackId: callback.id } satisfies DeliveryJobData,
      { singletonKey: messageId, group: { id: callback.id } },
    );
  let fair: FairDeliveries | undefined;

  async function runEnded(runId: string): Promise<void> {
    // The callbacks first: a run of a workflow without any (most runs) costs this one read.
    const callbacks = await store.callbacksOfRun(ctx.db, runId);
    if (!callbacks.length) return;
    const run = await findRun(ctx.db, runId);
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
      // A paused callback's message waits, pending, for its owner to re-enable it (resume).
      if ((await store.insertMessageOnce(ctx.db, message)) && callback.status === 'active')
        await send(message.id, callback);
    }
  }

  /** One attempt at a message, recorded; throws when it failed and a retry remains, so pg-boss retries it. */
  async function deliver(job: JobWithMetadata<DeliveryJobData>, sealer: Sealer): Promise<void> {
    const found = await store.findMessageForDelivery(ctx.db, job.data.messageId);
    if (!found || found.message.status !== 'pending') return; // callback deleted, or already settled
    if (found.callback.status !== 'active') return; // paused: resume queues it again
    const run = await findRun(ctx.db, found.message.run_id);
    if (!run) return;
    const { message, callback } = found;
    const body = eventOf(run, message.event_type);
    const at = ctx.now();
    const started = performance.now();
    const outcome = await post(
      policy,
      timeoutMs,
      callback.url,
      webhookHeaders(sealer.open(callback.secret, secretContext(callback.id)), message.id, at, body),
      body,
    );
    // A message queued again after a pause keeps the attempts it had: its budget does not restart.
    const last = job.retryCount >= job.retryLimit || message.attempts >= job.retryLimit;
    const attempt = {
      message_id: message.id,
      callback_id: callback.id,
      attempt: message.attempts + 1,
      ...outcome,
      duration_ms: Math.round(performance.now() - started),
      attempted_at: at,
    };
    const paused = await store.recordAttempt(
      ctx.db,
      attempt,
      outcome.status === 'succeeded' ? 'delivered' : last ? 'failed' : 'pending',
      pause,
    );
    if (outcome.status === 'succeeded') return;
    ctx.logger.info(
      { messageId: message.id, callbackId: callback.id, attempt: attempt.attempt, error: outcome.error, last, paused },
      'callback delivery failed',
    );
    if (paused)
      ctx.logger.warn(
        { callbackId: callback.id, userId: callback.user_id },
        'callback paused: its deliveries keep failing',
      );
    // Paused, the retry would find it paused and do nothing: the message waits for resume instead.
    if (!last && !paused) throw new Error(outcome.error ?? 'delivery failed');
  }

  return {
    runEnded,
    async work() {
      const sealer = ctx.sealer;
      if (!sealer) throw new Error('callback deliveries need the sealer (SECRETS_KEY) to open the signing secrets');
      if (fair) return;
      fair = startFairDeliveries({ ...fairnessOf(ctx, boss), handle: (job) => deliver(job, sealer) });
    },
    async sweep() {
      const now = ctx.now();
      for (const runId of await store.runEndsWithoutMessage(ctx.db, now - SWEEP_WINDOW_MS, now - SWEEP_GRACE_MS, 100))
        await runEnded(runId);
      for (const m of await store.messagesNeverAttempted(ctx.db, now - SWEEP_GRACE_MS * 4, 100))
        await send(m.id, { id: m.callback_id, user_id: m.user_id });
    },
    async resume(callbackId) {
      const found = await store.findCallback(ctx.db, callbackId);
      if (!found || found.status !== 'active') return;
      for (const id of await store.pendingMessagesOf(ctx.db, callbackId, RESUME_LIMIT)) await send(id, found);
    },
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
