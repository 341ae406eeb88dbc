// One attempt at delivering a run-ended callback's message: the signed event POSTed through the
// outbound guard, the attempt recorded, the callback paused when its attempts keep failing.
import type { JobWithMetadata } from 'pg-boss';
import type { AppContext } from '../context.ts';
import { OutboundError, outboundRequest, type OutboundPolicy } from '../outbound/index.ts';
import type { Sealer } from '../shared/sealing.ts';
import { contextOf, inSpan, recordFailure, ROOT_CONTEXT } from '../shared/tracing.ts';
import { findStoredRun, toRun, type RunRow } from '../runs/service.ts';
import * as store from './callbacks.store.ts';
import { secretContext } from './callbacks.store.ts';
import type { DeliveryJobData } from './fairDeliveries.ts';
import { webhookHeaders } from './signing.ts';

/** The receiver's answer is not kept; a larger one only fails the attempt. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** What deliveries read: the store, the limits, and (to make them) the sealer that opens the signing secrets. */
export type DeliveryContext = Pick<AppContext, 'db' | 'config' | 'logger' | 'now'> & { sealer?: Sealer | undefined };

/** How attempts are made and judged: the outbound guard, each attempt's time, and the pause rule. */
export interface AttemptRules {
  policy: OutboundPolicy;
  timeoutMs: number;
  pause: { failures: number; periodMs: number };
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

/** One attempt at a message, recorded; throws when it failed and a retry remains, so pg-boss retries it. */
export async function deliver(
  ctx: DeliveryContext,
  rules: AttemptRules,
  job: JobWithMetadata<DeliveryJobData>,
  sealer: Sealer,
): Promise<void> {
  const found = await store.findMessageForDelivery(ctx.db, job.data.messageId);
  if (!found || found.message.status !== 'pending') return; // callback deleted, or already settled
  if (found.callback.status !== 'active') return; // paused: resume queues it again
  const run = await findStoredRun(ctx, found.message.run_id);
  if (!run) return;
  const { message, callback } = found;
  const body = eventOf(run, message.event_type);
  const at = ctx.now();
  const started = performance.now();
  // In the run's trace (the request that created it; the run's spans have ended by now): the
  // POST's client span under this one sends its `traceparent` to the receiver.
  const outcome = await inSpan(
    'callback delivery',
    {
      attributes: {
        'run.id': run.id,
        'callback.id': callback.id,
        'message.id': message.id,
        attempt: message.attempts + 1,
      },
      parent: contextOf(run.trace_context ? { traceparent: run.trace_context } : undefined) ?? ROOT_CONTEXT,
    },
    async (span) => {
      const answer = await post(
        rules.policy,
        rules.timeoutMs,
        callback.url,
        webhookHeaders(sealer.open(callback.secret, secretContext(callback.id)), message.id, at, body),
        body,
      );
      if (answer.status === 'failed')
        recordFailure(span, new Error(answer.error ?? 'delivery failed'), 'callback_failed');
      return answer;
    },
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
    rules.pause,
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
