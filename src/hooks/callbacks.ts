// Run-ended callbacks of a workflow (openapi.yaml createCallback, listCallbacks, deleteCallback,
// listCallbackAttempts): URLs told of each run's end by a signed POST (deliveries.ts). The signing
// secret is shown once and kept sealed (it must be read back to sign); the URL must pass the
// outbound guard's checks that need no lookup (an IP literal in a refused range is refused here; a
// name is checked at each delivery, where its addresses are).
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { allowListOf, checkUrl, OutboundError } from '../outbound/index.ts';
import { ulid } from '../shared/ids.ts';
import { getWorkflow } from '../workflows/service.ts';
import { callbackNotFound, callbackUrlRefused, hookLimitReached } from './errors.ts';
import { newCallbackSecret } from './signing.ts';
import * as store from './callbacks.store.ts';
import { secretContext } from './callbacks.store.ts';
import { resumeDeliveries } from './deliveries.ts';
import type { AttemptRow, CallbackRow } from './callbacks.store.ts';

export type Callback = components['schemas']['Callback'];
export type CallbackWithSecret = components['schemas']['CallbackWithSecret'];
export type CallbackAttempt = components['schemas']['CallbackAttempt'];
type PageMeta = components['schemas']['PageMeta'];

export type CallbackContext = Pick<AppContext, 'db' | 'config' | 'now' | 'sealer'> & Partial<Pick<AppContext, 'runs'>>;

/** As trigger URLs: a workflow has few (Svix bounds endpoints per application too). */
export const MAX_CALLBACKS_PER_WORKFLOW = 10;

function toCallback(row: CallbackRow): Callback {
  return {
    id: row.id,
    workflow_id: row.workflow_id,
    url: row.url,
    description: row.description,
    created_at: new Date(row.created_at).toISOString(),
    status: row.status,
    paused_at: row.paused_at === null ? null : new Date(row.paused_at).toISOString(),
    disabled_reason: row.disabled_reason,
  };
}

function toAttempt(row: AttemptRow): CallbackAttempt {
  return {
    id: row.seq,
    message_id: row.message_id,
    run_id: row.run_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status: row.status,
    response_status: row.response_status,
    error: row.error,
    attempted_at: new Date(row.attempted_at).toISOString(),
    duration: row.duration_ms / 1000,
  };
}

const pageOf = (request: { page: number; perPage: number }) => ({
  offset: (request.page - 1) * request.perPage,
  limit: request.perPage,
});
const metaOf = (request: { page: number; perPage: number }, total: number): PageMeta => ({
  page: request.page,
  per_page: request.perPage,
  total,
  total_pages: Math.ceil(total / request.perPage),
});

/** Refuses a URL the outbound guard would never call (not http(s), credentials in it, a refused IP literal). */
function checkCallbackUrl(ctx: CallbackContext, url: string): void {
  try {
    checkUrl({ allow: allowListOf(ctx.config.WORKFLOW_HTTP_ALLOW_HOSTS) }, url);
  } catch (err) {
    if (err instanceof OutboundError) throw callbackUrlRefused(err.message);
    throw err;
  }
}

/** A new callback of the user's workflow; its secret is in this answer only. */
export async function createCallback(
  ctx: CallbackContext,
  userId: number,
  workflowId: string,
  body: { url: string; description?: string | undefined },
): Promise<CallbackWithSecret> {
  await getWorkflow(ctx, userId, workflowId); // the user's, and not deleted: else 404
  checkCallbackUrl(ctx, body.url);
  if ((await store.countCallbacks(ctx.db, workflowId)) >= MAX_CALLBACKS_PER_WORKFLOW)
    throw hookLimitReached('callbacks', MAX_CALLBACKS_PER_WORKFLOW);
  const secret = newCallbackSecret();
  const id = `cb_${ulid()}`;
  const row: CallbackRow = {
    id,
    workflow_id: workflowId,
    user_id: userId,
    url: body.url,
    description: body.description ?? '',
    secret: ctx.sealer.seal(secret, secretContext(id)),
    created_at: ctx.now(),
    status: 'active',
    paused_at: null,
    disabled_reason: null,
    consecutive_failures: 0,
    failing_since: null,
  };
  await store.insertCallback(ctx.db, row);
  return { ...toCallback(row), secret };
}

export async function listCallbacks(
  ctx: CallbackContext,
  userId: number,
  workflowId: string,
  request: { page: number; perPage: number },
): Promise<{ data: Callback[]; meta: PageMeta }> {
  await getWorkflow(ctx, userId, workflowId);
  const [total, rows] = await Promise.all([
    store.countCallbacks(ctx.db, workflowId),
    store.listCallbacksNewestFirst(ctx.db, workflowId, pageOf(request)),
  ]);
  return { data: rows.map(toCallback), meta: metaOf(request, total) };
}

/** Deletes the callback: a delivery job that comes later finds no message and does nothing. */
export async function deleteCallback(
  ctx: CallbackContext,
  userId: number,
  workflowId: string,
  callbackId: string,
): Promise<void> {
  await getWorkflow(ctx, userId, workflowId);
  if (!(await store.deleteCallback(ctx.db, workflowId, callbackId))) throw callbackNotFound(callbackId);
}

/**
 * The callback active again (its owner's call: the service paused it when its deliveries kept
 * failing), its held-back messages queued again; an active one is left as it is.
 */
export async function enableCallback(
  ctx: CallbackContext,
  userId: number,
  workflowId: string,
  callbackId: string,
): Promise<Callback> {
  await getWorkflow(ctx, userId, workflowId);
  const before = await store.findCallbackOfWorkflow(ctx.db, workflowId, callbackId);
  if (!before) throw callbackNotFound(callbackId);
  if (before.status !== 'active') {
    if (!(await store.enableCallback(ctx.db, workflowId, callbackId))) throw callbackNotFound(callbackId);
    // Its held-back messages go on the run queue's pg-boss, where the deliveries work.
    const boss = ctx.runs?.queue.boss;
    if (boss) await resumeDeliveries(ctx, boss, callbackId);
  }
  const after = await store.findCallbackOfWorkflow(ctx.db, workflowId, callbackId);
  if (!after) throw callbackNotFound(callbackId);
  return toCallback(after);
}

export async function listCallbackAttempts(
  ctx: CallbackContext,
  userId: number,
  workflowId: string,
  callbackId: string,
  request: { page: number; perPage: number },
): Promise<{ data: CallbackAttempt[]; meta: PageMeta }> {
  await getWorkflow(ctx, userId, workflowId);
  if (!(await store.findCallbackOfWorkflow(ctx.db, workflowId, callbackId))) throw callbackNotFound(callbackId);
  const [total, rows] = await Promise.all([
    store.countAttempts(ctx.db, callbackId),
    store.listAttemptsNewestFirst(ctx.db, callbackId, pageOf(request)),
  ]);
  return { data: rows.map(toAttempt), meta: metaOf(request, total) };
}
