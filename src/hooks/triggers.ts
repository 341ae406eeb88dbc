// Trigger URLs of a workflow (openapi.yaml createTrigger, listTriggers, deleteTrigger,
// rotateTrigger, updateTrigger, runHook): `{BASE_URL}/hooks/{token}` starts a run of the workflow. The token is
// the credential, so it is made like an API key (256 random bits, a scannable `wht_` prefix) and
// kept only as a hash; its first characters find the row, then the hash of the whole token is
// compared in constant time (a lookup by the secret itself would let an index's timing tell).
import type { components } from '../../generated/api.d.ts';
import { isUniqueViolation } from '../db/insert.ts';
import { hashToken, safeEqual } from '../shared/crypto.ts';
import { invalidField } from '../shared/errors.ts';
import { hookLimitReached, invalidSignature, triggerNotFound } from './errors.ts';
import { ulid } from '../shared/ids.ts';
import { getWorkflow, type WorkflowContext } from '../workflows/service.ts';
import * as store from './triggers.store.ts';
import { lookupOf, newTriggerToken, shownPrefix } from './triggerTokens.ts';
import type { HookBody } from './hookBody.ts';
import { hookInputs, mappedInputs, templateProblems } from './hookInputs.ts';
import type { RunInputs } from '../runs/service.ts';
import { runBudget } from '../runs/compute/budget.ts';
import { signatureSecretContext, type TriggerRow } from './triggers.store.ts';
import { signatureProblem, standardWebhooksKey, type SignatureScheme } from './signatures.ts';
import type { AppContext } from '../context.ts';

export { TRIGGER_TOKEN_PREFIX } from './triggerTokens.ts';

export type Trigger = components['schemas']['Trigger'];
export type TriggerWithUrl = components['schemas']['TriggerWithUrl'];
type PageMeta = components['schemas']['PageMeta'];
type TriggerCreate = components['schemas']['TriggerCreate'];
type TriggerUpdate = components['schemas']['TriggerUpdate'];
/** Making a trigger that verifies signatures seals its secret; verifying opens it. */
type TriggerContext = WorkflowContext & Pick<AppContext, 'sealer'>;

/** A trigger URL is a credential: a workflow has few (as Svix bounds endpoints per app). */
export const MAX_TRIGGERS_PER_WORKFLOW = 10;

function toTrigger(row: TriggerRow): Trigger {
  return {
    id: row.id,
    workflow_id: row.workflow_id,
    name: row.name,
    token_prefix: shownPrefix(row.token_lookup),
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
    ...(row.inputs === null ? {} : { inputs: JSON.parse(row.inputs) as Record<string, string> }),
    ...(row.signature_scheme === null ? {} : { signature: { scheme: row.signature_scheme } }),
  };
}

const urlOf = (ctx: WorkflowContext, token: string) => `${ctx.config.BASE_URL}/hooks/${token}`;

/** Tries a store write with a fresh token until its lookup part is one no other trigger has (a 72-bit collision: never, in practice). */
async function withFreshToken<T>(
  write: (token: ReturnType<typeof newTriggerToken>) => Promise<T>,
): Promise<{ result: T; token: string }> {
  for (let tries = 1; ; tries++) {
    const token = newTriggerToken();
    try {
      return { result: await write(token), token: token.token };
    } catch (err) {
      if (!isUniqueViolation(err) || tries >= 3) throw err;
    }
  }
}

/** Refuses (400) a secret its scheme cannot use. */
function checkSecret(scheme: SignatureScheme, secret: string, pointer: string): void {
  if (scheme === 'standard_webhooks' && !standardWebhooksKey(secret))
    throw invalidField(
      'A Standard Webhooks secret is whsec_ and the base64 of 16 to 64 bytes.',
      pointer,
      'is not a Standard Webhooks secret (whsec_ + base64)',
    );
}

/** A new trigger of the user's workflow; its URL is in this answer only. */
export async function createTrigger(
  ctx: TriggerContext,
  userId: number,
  workflowId: string,
  request: TriggerCreate,
): Promise<TriggerWithUrl> {
  const workflow = await getWorkflow(ctx, userId, workflowId); // the user's, and not deleted: else 404
  const problem = request.inputs && templateProblems(workflow.nodes, request.inputs)[0];
  if (problem) throw invalidField(`The trigger's inputs do not fit the workflow.`, problem.pointer, problem.message);
  const signature = request.signature;
  if (signature) checkSecret(signature.scheme, signature.secret, '/body/signature/secret');
  if ((await store.countTriggers(ctx.db, workflowId)) >= MAX_TRIGGERS_PER_WORKFLOW)
    throw hookLimitReached('trigger URLs', MAX_TRIGGERS_PER_WORKFLOW);
  const base = {
    id: `trg_${ulid()}`,
    workflow_id: workflowId,
    user_id: userId,
    name: request.name ?? '',
    created_at: ctx.now(),
    last_used_at: null,
    inputs: request.inputs ? JSON.stringify(request.inputs) : null,
    signature_scheme: signature?.scheme ?? null,
  };
  const { result: row, token } = await withFreshToken(async ({ lookup, hash }) => {
    const secret = signature ? ctx.sealer.seal(signature.secret, signatureSecretContext(base.id)) : null;
    const row: TriggerRow = { ...base, token_lookup: lookup, token_hash: hash, signature_secret: secret };
    await store.insertTrigger(ctx.db, row);
    return row;
  });
  return { ...toTrigger(row), url: urlOf(ctx, token) };
}

export async function listTriggers(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  request: { page: number; perPage: number },
): Promise<{ data: Trigger[]; meta: PageMeta }> {
  await getWorkflow(ctx, userId, workflowId);
  const [total, rows] = await Promise.all([
    store.countTriggers(ctx.db, workflowId),
    store.listTriggersNewestFirst(ctx.db, workflowId, {
      offset: (request.page - 1) * request.perPage,
      limit: request.perPage,
    }),
  ]);
  return {
    data: rows.map(toTrigger),
    meta: { page: request.page, per_page: request.perPage, total, total_pages: Math.ceil(total / request.perPage) },
  };
}

/** The signature columns an update's `signature` gives: `none` forgets the secret; a scheme alone keeps it. */
function signatureChange(
  ctx: TriggerContext,
  row: TriggerRow,
  signature: NonNullable<TriggerUpdate['signature']>,
): Pick<TriggerRow, 'signature_scheme' | 'signature_secret'> {
  if (signature.scheme === 'none') return { signature_scheme: null, signature_secret: null };
  if (signature.secret !== undefined) {
    checkSecret(signature.scheme, signature.secret, '/body/signature/secret');
    const sealed = ctx.sealer.seal(signature.secret, signatureSecretContext(row.id));
    return { signature_scheme: signature.scheme, signature_secret: sealed };
  }
  if (row.signature_secret === null)
    throw invalidField(
      'The trigger has no signing secret yet: send signature.secret with the scheme.',
      '/body/signature/secret',
      'is required: the trigger has no secret to keep',
    );
  checkSecret(
    signature.scheme,
    ctx.sealer.open(row.signature_secret, signatureSecretContext(row.id)),
    '/body/signature/scheme',
  );
  return { signature_scheme: signature.scheme, signature_secret: row.signature_secret };
}

/** Changes the trigger's name, inputs templates or signature in place; its token (URL) stays. */
export async function updateTrigger(
  ctx: TriggerContext,
  userId: number,
  workflowId: string,
  triggerId: string,
  request: TriggerUpdate,
): Promise<Trigger> {
  const workflow = await getWorkflow(ctx, userId, workflowId);
  const row = await store.findTriggerOfWorkflow(ctx.db, workflowId, triggerId);
  if (!row) throw triggerNotFound(triggerId);
  const changes: Partial<TriggerRow> = {};
  if (request.name !== undefined) changes.name = request.name;
  if (request.inputs !== undefined) {
    // `{}` takes the templates away: the body is read as runHook says by default.
    const empty = Object.keys(request.inputs).length === 0;
    const problem = !empty && templateProblems(workflow.nodes, request.inputs)[0];
    if (problem) throw invalidField(`The trigger's inputs do not fit the workflow.`, problem.pointer, problem.message);
    changes.inputs = empty ? null : JSON.stringify(request.inputs);
  }
  if (request.signature) Object.assign(changes, signatureChange(ctx, row, request.signature));
  if (!(await store.updateTrigger(ctx.db, workflowId, triggerId, changes))) throw triggerNotFound(triggerId);
  return toTrigger({ ...row, ...changes });
}

/** Revokes the trigger: its URL is 404 once this returns. */
export async function deleteTrigger(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  triggerId: string,
): Promise<void> {
  await getWorkflow(ctx, userId, workflowId);
  if (!(await store.deleteTrigger(ctx.db, workflowId, triggerId))) throw triggerNotFound(triggerId);
}

/** A new URL for the trigger; the old one is 404 once this returns (no overlap: rotating is what follows a leak). */
export async function rotateTrigger(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  triggerId: string,
): Promise<TriggerWithUrl> {
  await getWorkflow(ctx, userId, workflowId);
  const { result: replaced, token } = await withFreshToken((fresh) =>
    store.replaceTriggerToken(ctx.db, workflowId, triggerId, fresh),
  );
  const row = replaced ? await store.findTriggerOfWorkflow(ctx.db, workflowId, triggerId) : undefined;
  if (!row) throw triggerNotFound(triggerId);
  return { ...toTrigger(row), url: urlOf(ctx, token) };
}

/**
 * The trigger a URL's token names, with its workflow standing; else 404 `trigger_not_found`
 * (unknown, revoked, rotated away, or its workflow deleted: one answer, so a caller learns nothing).
 * Marks it used.
 */
export async function triggerOfToken(ctx: WorkflowContext, token: string): Promise<TriggerRow> {
  const lookup = lookupOf(token);
  const row = lookup === undefined ? undefined : await store.findLiveTriggerByLookup(ctx.db, lookup);
  if (!row || !safeEqual(row.token_hash, hashToken(token))) throw triggerNotFound('for this URL');
  await store.touchTrigger(ctx.db, row.id, ctx.now());
  return row;
}

/** The run inputs a trigger URL's body gives, read against its workflow's current graph (hookInputs.ts). */
export async function inputsOfHook(ctx: WorkflowContext, trigger: TriggerRow, body: HookBody): Promise<RunInputs> {
  const workflow = await getWorkflow(ctx, trigger.user_id, trigger.workflow_id);
  if (trigger.inputs === null) return hookInputs(workflow.nodes, body);
  const templates = JSON.parse(trigger.inputs) as Record<string, string>;
  return mappedInputs(workflow.nodes, templates, body, runBudget(ctx.config, String(trigger.user_id)));
}

/** Refuses (401) a request whose sender signature the trigger requires and does not find valid. */
export function verifySignature(ctx: TriggerContext, trigger: TriggerRow, body: HookBody): void {
  if (trigger.signature_scheme === null) return;
  const secret =
    trigger.signature_secret && ctx.sealer.open(trigger.signature_secret, signatureSecretContext(trigger.id));
  const problem = secret
    ? signatureProblem(trigger.signature_scheme as SignatureScheme, secret, body.headers, body.raw, ctx.now())
    : 'The trigger has no signing secret.';
  if (problem) throw invalidSignature(problem);
}
