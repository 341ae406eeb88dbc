import { Router, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import type { SharedRateLimiter } from '../../http/sharedRateLimiter.ts';
import * as runs from '../../runs/service.ts';
import { retryRun } from '../../runs/retry.ts';
import { getWorkflow } from '../../workflows/service.ts';
import { retryRefusal } from '../views/runControls.ts';
import { messagePage } from '../views/message.ts';
import type { PageUser } from '../views/format.ts';
import { field, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';
import * as approvals from '../../runs/approvals.ts';
import { answerSchemaOf } from '../../nodes/approval/answers.ts';
import { answerOf } from './approvals.ts';

// The run page's buttons: Cancel (POST .../cancel, the API's cancelRun) and Retry (POST
// .../retry: the API's retryRun, a new run with the run's inputs that resumes it, so the same
// input rules and quotas apply). Both answer with a redirect (303) to the page to look at next.

/** The user's run, or the 404 page sent and undefined. */
async function runOrNotFound(ctx: AppContext, res: Response, user: PageUser, workflowId: string, runId: string) {
  try {
    return await runs.getRun(ctx, user.id, workflowId, runId);
  } catch (err) {
    refusedWith(err, 404);
    sendPage(res, 404, notFoundPage(user, 'run'));
    return undefined;
  }
}

export function runControlsRouter(ctx: AppContext, runStarts?: SharedRateLimiter): Router {
  const router = Router();

  router.post('/workflows/:id/runs/:runId/cancel', async (req, res) => {
    const user = await pageUser(ctx, req);
    const { id, runId } = req.params;
    try {
      await runs.cancelRun(ctx, user.id, id, runId);
    } catch (err) {
      // 409: it ended meanwhile; the page says how.
      if (refusedWith(err, 404, 409).status === 404) return sendPage(res, 404, notFoundPage(user, 'run'));
      return res.redirect(303, `/workflows/${id}/runs/${runId}?done=run-ended-first`);
    }
    res.redirect(303, `/workflows/${id}/runs/${runId}?done=run-cancelled`);
  });

  // A waiting run's answer from its page's form (the API's resumeRun, as the run's owner).
  router.post('/workflows/:id/runs/:runId/resume', async (req, res) => {
    const user = await pageUser(ctx, req);
    const { id, runId } = req.params;
    const nodeId = field(req, 'node_id');
    try {
      const { run, graph } = await runs.getRunWithGraph(ctx, user.id, id, runId);
      const node = graph.nodes.find((n) => n.id === nodeId);
      const answer = answerOf(answerSchemaOf(node?.config ?? {}), req.body as Record<string, unknown>);
      await approvals.resumeRun(ctx, user.id, id, run.id, { ...(nodeId ? { node_id: nodeId } : {}), answer });
    } catch (err) {
      const refused = refusedWith(err, 400, 404, 409);
      if (refused.status === 404) return sendPage(res, 404, notFoundPage(user, 'run'));
      const title = refused.status === 400 ? 'The answer does not fit' : 'The run no longer waits';
      return sendPage(res, refused.status, messagePage({ title, message: refused.message, error: true, user }));
    }
    res.redirect(303, `/workflows/${id}/runs/${runId}?done=run-resumed`);
  });

  router.post('/workflows/:id/runs/:runId/retry', async (req, res) => {
    const user = await pageUser(ctx, req);
    const { id, runId } = req.params;
    const run = await runOrNotFound(ctx, res, user, id, runId);
    if (!run) return;
    const workflow = await getWorkflow(ctx, user.id, id).catch((err: unknown) => void refusedWith(err, 404));
    const refusal = retryRefusal(run, workflow ?? undefined);
    if (refusal)
      return sendPage(res, 409, messagePage({ title: 'Cannot retry this run', message: refusal, error: true, user }));
    try {
      // One retry per run: the key makes a second click (or a resent form) answer the same new run.
      const owner = { userId: user.id, workflowId: id };
      const started = await retryRun(ctx, owner, run.id, `console-retry-${run.id}`, runStarts);
      res.redirect(303, `/workflows/${id}/runs/${started.run.id}`);
    } catch (err) {
      const problem = refusedWith(err, 400, 404, 409, 429, 503);
      for (const [name, value] of Object.entries(problem.headers)) res.set(name, value);
      sendPage(
        res,
        problem.status,
        messagePage({ title: 'Run not started', message: problem.message, error: true, user }),
      );
    }
  });

  return router;
}
