// Routes of a workflow's run-ended callbacks (openapi.yaml: listCallbacks, createCallback,
// deleteCallback, enableCallback, listCallbackAttempts). The contract validator has authenticated the API key and
// checked params and body; handlers map HTTP to callbacks.ts.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/principal.ts';
import type { Operations } from '../http/operations.ts';
import { pageOf, paginationLinks } from '../http/pagination.ts';
import * as callbacks from './callbacks.ts';

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

type CreateBody = operations['createCallback']['requestBody']['content']['application/json'];
type ListQuery = NonNullable<operations['listCallbacks']['parameters']['query']>;

const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
const workflowIdOf = (req: Request) => String(req.params.workflow_id);
const callbackIdOf = (req: Request) => String(req.params.callback_id);
const pageOfRequest = (req: Request) => pageOf(req.query as ListQuery);

export function callbackOperations(ctx: AppContext): Operations {
  async function listCallbacks(req: Request, res: Response<JsonOf<'listCallbacks', 200>>) {
    const page = await callbacks.listCallbacks(ctx, userOf(req), workflowIdOf(req), pageOfRequest(req));
    res.setHeader('Link', paginationLinks(`/api/workflows/${workflowIdOf(req)}/callbacks`, page.meta));
    res.status(200).json(page);
  }

  async function createCallback(req: Request, res: Response<JsonOf<'createCallback', 201>>) {
    const callback = await callbacks.createCallback(ctx, userOf(req), workflowIdOf(req), req.body as CreateBody);
    res.setHeader('Cache-Control', 'no-store'); // the signing secret
    res.status(201).json({ data: callback });
  }

  async function deleteCallback(req: Request, res: Response) {
    await callbacks.deleteCallback(ctx, userOf(req), workflowIdOf(req), callbackIdOf(req));
    res.status(204).end();
  }

  async function enableCallback(req: Request, res: Response<JsonOf<'enableCallback', 200>>) {
    const callback = await callbacks.enableCallback(ctx, userOf(req), workflowIdOf(req), callbackIdOf(req));
    res.status(200).json({ data: callback });
  }

  async function listCallbackAttempts(req: Request, res: Response<JsonOf<'listCallbackAttempts', 200>>) {
    const page = await callbacks.listCallbackAttempts(
      ctx,
      userOf(req),
      workflowIdOf(req),
      callbackIdOf(req),
      pageOfRequest(req),
    );
    res.setHeader(
      'Link',
      paginationLinks(`/api/workflows/${workflowIdOf(req)}/callbacks/${callbackIdOf(req)}/attempts`, page.meta),
    );
    res.status(200).json(page);
  }

  return { listCallbacks, createCallback, deleteCallback, enableCallback, listCallbackAttempts };
}
