// Routes of a workflow's trigger URLs (openapi.yaml: listTriggers, createTrigger, deleteTrigger,
// rotateTrigger, updateTrigger) and of the URLs themselves (runHook). The contract validator has authenticated
// the API key (runHook has none: its token is the credential) and checked params and body.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/principal.ts';
import type { Operations } from '../http/operations.ts';
import { pageOf, paginationLinks } from '../http/pagination.ts';
import type { SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { startRunAndAnswer } from '../runs/router.ts';
import { apiRateLimited } from '../shared/errors.ts';
import * as triggers from './triggers.ts';
import { hookBodyOf } from './hookBody.ts';
import { deliveryKeyOf } from './deliveryIds.ts';

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

type CreateBody = NonNullable<operations['createTrigger']['requestBody']>['content']['application/json'];
type ListQuery = NonNullable<operations['listTriggers']['parameters']['query']>;
type UpdateBody = operations['updateTrigger']['requestBody']['content']['application/json'];

const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
const workflowIdOf = (req: Request) => String(req.params.workflow_id);
const triggerIdOf = (req: Request) => String(req.params.trigger_id);
const triggersPath = (workflowId: string) => `/api/workflows/${workflowId}/triggers`;

/** What a trigger URL spends: the API's per-credential allowance (`api`) and its owner's run starts (`runStarts`). */
export interface HookLimiters {
  api: SharedRateLimiter;
  runStarts: SharedRateLimiter;
}

export function triggerOperations(ctx: AppContext, limiters: HookLimiters): Operations {
  async function listTriggers(req: Request, res: Response<JsonOf<'listTriggers', 200>>) {
    const query = req.query as ListQuery;
    const page = await triggers.listTriggers(ctx, userOf(req), workflowIdOf(req), pageOf(query));
    res.setHeader('Link', paginationLinks(triggersPath(workflowIdOf(req)), page.meta));
    res.status(200).json(page);
  }

  async function createTrigger(req: Request, res: Response<JsonOf<'createTrigger', 201>>) {
    const body = (req.body ?? {}) as CreateBody;
    const trigger = await triggers.createTrigger(ctx, userOf(req), workflowIdOf(req), body);
    res.setHeader('Cache-Control', 'no-store'); // the URL is a credential
    res.status(201).json({ data: trigger });
  }

  async function deleteTrigger(req: Request, res: Response) {
    await triggers.deleteTrigger(ctx, userOf(req), workflowIdOf(req), triggerIdOf(req));
    res.status(204).end();
  }

  async function rotateTrigger(req: Request, res: Response<JsonOf<'rotateTrigger', 200>>) {
    const trigger = await triggers.rotateTrigger(ctx, userOf(req), workflowIdOf(req), triggerIdOf(req));
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({ data: trigger });
  }

  /** A trigger URL: its token names the workflow and owner; then exactly an API start (quotas, Idempotency-Key, Prefer: wait). */
  async function runHook(req: Request, res: Response) {
    const trigger = await triggers.triggerOfToken(ctx, String(req.params.token));
    // The trigger is a credential of its own: it spends its own allowance, as an API key does (apiRateLimit).
    const retryAfter = limiters.api.hit(`trigger:${trigger.id}`);
    if (retryAfter !== null) throw apiRateLimited(ctx.config.API_RATE_LIMIT_PER_MINUTE, retryAfter);
    const owner = { userId: trigger.user_id, workflowId: trigger.workflow_id };
    const body = hookBodyOf(req);
    triggers.verifySignature(ctx, trigger, body); // before anything is read or started
    const inputs = () => triggers.inputsOfHook(ctx, trigger, body);
    const delivery = deliveryKeyOf(trigger.id, body, ctx.now(), ctx.config.HOOK_DELIVERY_WINDOW_SECONDS);
    await startRunAndAnswer(ctx, req, res, owner, inputs, limiters.runStarts, undefined, delivery);
  }

  async function updateTrigger(req: Request, res: Response<JsonOf<'updateTrigger', 200>>) {
    const body = req.body as UpdateBody;
    const trigger = await triggers.updateTrigger(ctx, userOf(req), workflowIdOf(req), triggerIdOf(req), body);
    res.status(200).json({ data: trigger });
  }

  return { listTriggers, createTrigger, deleteTrigger, rotateTrigger, runHook, updateTrigger };
}
