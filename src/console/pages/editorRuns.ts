import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import type { SharedRateLimiter } from '../../http/sharedRateLimiter.ts';
import * as runs from '../../runs/service.ts';
import { testNode } from '../../runs/nodeTest.ts';
import { getWorkflow } from '../../workflows/service.ts';
import { Problem, runsNotConfigured } from '../../shared/errors.ts';
import { inputField, inputVariables } from '../views/workflows.ts';
import { field } from './common.ts';

// The editor's run panel (/assets/editor.js on /workflows/{id}/edit): start a run of the saved
// graph, read a run's steps, test one node on pinned values. The same service calls (and rules,
// quotas and budgets) as the API's runWorkflow, getRun and testWorkflowNode, for the signed-in
// user by the session cookie (a browser page holds no API key), answered as JSON: the API's own
// shapes on success, a problem (`status`, `code`, `detail`, `errors`) on a refusal. Following the
// run is the run page's event stream (GET .../runs/{run_id}/events), answering an approval and
// retrying are the run page's forms.

/** A refusal as JSON; anything else is a bug (the console's error page). */
function refused(res: Response, err: unknown): void {
  if (!(err instanceof Problem)) throw err;
  for (const [name, value] of Object.entries(err.headers)) res.set(name, value);
  res.status(err.status).set('Cache-Control', 'no-store').json(err.body());
}

/** The form's `body` field as a JSON object, or a 400 problem. */
function jsonBody(req: Request): Record<string, unknown> {
  const text = field(req, 'body') || '{}';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Problem('invalid_field', 'The pinned values are not a JSON object.', {
      errors: [{ pointer: '/body', message: 'must be a JSON object' }],
    });
  return value as Record<string, unknown>;
}

export function editorRunsRouter(ctx: AppContext, runStarts?: SharedRateLimiter): Router {
  const router = Router();

  // A run of the saved graph, its inputs as the run form's fields (`input_<variable>`, typed ones as JSON).
  router.post('/workflows/:id/editor/run', async (req, res) => {
    const userId = req.webSession!.uid!;
    try {
      const workflow = await getWorkflow(ctx, userId, req.params.id);
      // A field not sent is an input not given (the service's 400 names it); an empty one is the empty text, as the API takes it.
      const sent = (req.body ?? {}) as Record<string, unknown>;
      const values = Object.fromEntries(
        inputVariables(workflow.nodes).flatMap((v) => {
          const value = sent[inputField(v)];
          return typeof value === 'string' ? [[v, value]] : [];
        }),
      );
      const inputs = runs.inputsFromText(workflow.nodes, values);
      const { run } = await runs.startRun(ctx, userId, workflow.id, inputs, `console-${randomUUID()}`, runStarts);
      res.status(202).set('Cache-Control', 'no-store').json({ data: run });
    } catch (err) {
      refused(res, err);
    }
  });

  router.get('/workflows/:id/runs/:runId/detail', async (req, res) => {
    try {
      const run = await runs.getRun(ctx, req.webSession!.uid!, req.params.id, req.params.runId);
      res.set('Cache-Control', 'no-store').json({ data: run });
    } catch (err) {
      refused(res, err);
    }
  });

  // `body`: testWorkflowNode's request as JSON text (`inputs`, `upstream`).
  router.post('/workflows/:id/editor/nodes/:nodeId/test', async (req, res) => {
    const owner = { userId: req.webSession!.uid!, workflowId: req.params.id };
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const body = jsonBody(req);
      const pinned = {
        ...(typeof body.inputs === 'object' && body.inputs !== null ? { inputs: body.inputs } : {}),
        ...(typeof body.upstream === 'object' && body.upstream !== null ? { upstream: body.upstream } : {}),
      } as Parameters<typeof testNode>[3];
      if (!runStarts) throw runsNotConfigured();
      const result = await testNode(ctx, owner, req.params.nodeId, pinned, runStarts, gone.signal);
      res.set('Cache-Control', 'no-store').json({ data: result });
    } catch (err) {
      refused(res, err);
    }
  });

  return router;
}
