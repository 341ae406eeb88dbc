import { Router, type Request } from 'express';
import type { AppContext } from '../../context.ts';
import { cancelRunsOfDeletedWorkflow } from '../../runs/service.ts';
import { endSchedulesOfDeletedWorkflow } from '../../schedules/service.ts';
import { deleteWorkflow, getWorkflow, type Workflow } from '../../workflows/service.ts';
import { confirmPage } from '../views/confirm.ts';
import type { PageUser } from '../views/format.ts';
import { WORKFLOWS_NAV } from '../views/workflows.ts';
import { notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// /workflows/{id}/delete: the workflow page's Delete button leads to a confirmation that names
// the version shown; confirming deletes that version only (If-Match, as DELETE /api/workflows/{id}
// takes it), then cancels its runs in flight, as the API's deleteWorkflow does. A save by anyone in
// between makes the confirmation do nothing and say so: nobody deletes a version they did not see.

const confirmation = (user: PageUser, workflow: Workflow, problem?: string) =>
  confirmPage({
    user,
    current: WORKFLOWS_NAV,
    title: `Delete ${workflow.name}?`,
    consequence: `Version ${workflow.version} of this workflow (${workflow.nodes.length} nodes) is deleted, and its queued and running runs are cancelled. Its run history goes with it. This cannot be undone.`,
    action: `/workflows/${workflow.id}/delete`,
    button: 'Delete this workflow',
    cancel: `/workflows/${workflow.id}`,
    hidden: { version: String(workflow.version) },
    problem,
  });

const versionOf = (req: Request): number | undefined => {
  const v = Number((req.body as Record<string, unknown> | undefined)?.version);
  return Number.isSafeInteger(v) && v >= 1 ? v : undefined;
};

export function workflowDeletionRouter(ctx: AppContext): Router {
  const router = Router();
  const find = (user: PageUser, id: string) =>
    getWorkflow(ctx, user.id, id).catch((err: unknown) => void refusedWith(err, 404));

  router.get('/workflows/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    const workflow = await find(user, req.params.id);
    if (!workflow) return sendPage(res, 404, notFoundPage(user, 'workflow'));
    sendPage(res, 200, confirmation(user, workflow));
  });

  router.post('/workflows/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    const version = versionOf(req);
    if (version === undefined) {
      // Not from the confirmation page (it names the version): nothing is deleted, the question is asked.
      const workflow = await find(user, req.params.id);
      return workflow
        ? sendPage(res, 400, confirmation(user, workflow))
        : sendPage(res, 404, notFoundPage(user, 'workflow'));
    }
    try {
      await deleteWorkflow(ctx, user.id, req.params.id, `"${version}"`);
    } catch (err) {
      const refused = refusedWith(err, 404, 412);
      const workflow = refused.status === 412 ? await find(user, req.params.id) : undefined;
      if (!workflow) return sendPage(res, 404, notFoundPage(user, 'workflow'));
      const changed = `Not deleted: the workflow was saved meanwhile (it is now version ${workflow.version}; you confirmed version ${version}). Look at it again, then confirm if you still want it gone.`;
      return sendPage(res, 409, confirmation(user, workflow, changed));
    }
    // Deleted first, so no new run can start; then what is in flight stops.
    await cancelRunsOfDeletedWorkflow(ctx, req.params.id);
    await endSchedulesOfDeletedWorkflow(ctx, req.params.id);
    res.redirect(303, '/workflows?done=workflow-deleted');
  });

  return router;
}
