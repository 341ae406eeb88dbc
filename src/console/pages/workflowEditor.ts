import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { Problem } from '../../shared/errors.ts';
import { createWorkflow, getWorkflow, updateWorkflow, type Workflow } from '../../workflows/service.ts';
import { servedModels } from '../../workflows/models.ts';
import { templateScopes } from '../../workflows/templateScope.ts';
import { checkEditorForm, graphJson, type EditorForm } from '../workflowEditing.ts';
import { renderedTemplates } from '../templatePreview.ts';
import { editorPage, editorPreview } from '../views/workflowEditor.ts';
import { notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// /workflows/new and /workflows/{id}/edit: create and change a workflow in the browser, through
// the same service (and rules) as POST and PATCH /api/workflows. An edit saves with If-Match set
// to the version it started from.

/** A new workflow's starting graph: the smallest that runs (an input, the echo model, an output). */
const STARTER = {
  nodes: [
    { id: 'input', type: 'text_input', config: { variable: 'text' } },
    { id: 'answer', type: 'llm_call', config: { model: 'echo', prompt: '{{ inputs.text }}' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'input', to: 'answer' },
    { from: 'answer', to: 'result' },
  ],
} as Pick<Workflow, 'nodes' | 'edges'>;

/** What each node's templates may read, for the graph as written (none while it is not JSON). */
function scopesOf(graph: string): Record<string, string[]> {
  try {
    const { nodes, edges } = (JSON.parse(graph) ?? {}) as { nodes?: unknown; edges?: unknown };
    return templateScopes(nodes, edges);
  } catch {
    return {};
  }
}

/** The form as sent: text fields as written (the graph's whitespace is the user's). */
function formOf(req: Request): EditorForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : '');
  return { name: text('name').trim(), description: text('description'), graph: text('graph') };
}

const versionOf = (req: Request): number | undefined => {
  const v = Number((req.body as Record<string, unknown> | undefined)?.version);
  return Number.isSafeInteger(v) && v >= 1 ? v : undefined;
};

export function workflowEditorRouter(ctx: AppContext): Router {
  const router = Router();

  // The builder's live preview (/assets/editor.js, while typing): the picture and the problems of
  // the form as it stands, by the same rules as saving; nothing is saved. CSRF-checked as any POST.
  // With `?workflow=` (an edit), its template fields rendered with its last run's values too.
  router.post('/workflows/editor/preview', async (req, res) => {
    const form = formOf(req);
    const checked = checkEditorForm(ctx, form);
    const workflowId = typeof req.query.workflow === 'string' ? req.query.workflow.slice(0, 64) : undefined;
    // The user is read only for an edit: a new workflow has no run to render with.
    const userId = workflowId ? (await pageUser(ctx, req)).id : undefined;
    res.set('Cache-Control', 'no-store').json({
      ...editorPreview(form.graph, 'problems' in checked ? checked.problems : []),
      scopes: scopesOf(form.graph),
      ...(userId === undefined
        ? { rendered: {}, renderedFrom: null }
        : await renderedTemplates(ctx, userId, workflowId, form.graph)),
    });
  });

  router.get('/workflows/new', async (req, res) => {
    const user = await pageUser(ctx, req);
    sendPage(
      res,
      200,
      editorPage({
        models: servedModels(ctx.config),
        user,
        name: '',
        description: '',
        graph: graphJson(STARTER),
        problems: [],
      }),
    );
  });

  router.post('/workflows/new', async (req, res) => {
    const user = await pageUser(ctx, req);
    const form = formOf(req);
    const checked = checkEditorForm(ctx, form);
    if ('problems' in checked)
      return sendPage(
        res,
        422,
        editorPage({ models: servedModels(ctx.config), user, ...form, problems: checked.problems }),
      );
    // The form checks what needs no store; the save adds the calls of other workflows (the user's,
    // no cycle, their inputs mapped), whose problems the editor lists as it lists the form's.
    const workflow = await createWorkflow(ctx, user.id, checked.body).catch((err: unknown) => {
      if (err instanceof Problem && err.status === 422 && err.errors) return err.errors;
      throw err;
    });
    if (Array.isArray(workflow))
      return sendPage(res, 422, editorPage({ models: servedModels(ctx.config), user, ...form, problems: workflow }));
    res.redirect(303, `/workflows/${workflow.id}`);
  });

  router.get('/workflows/:id/edit', async (req, res) => {
    const user = await pageUser(ctx, req);
    const workflow = await getWorkflow(ctx, user.id, req.params.id).catch((err: unknown) => void refusedWith(err, 404));
    if (!workflow) return sendPage(res, 404, notFoundPage(user, 'workflow'));
    const { name, description, version } = workflow;
    const graph = graphJson(workflow);
    sendPage(
      res,
      200,
      editorPage({ models: servedModels(ctx.config), user, workflow, name, description, graph, version, problems: [] }),
    );
  });

  router.post('/workflows/:id/edit', (req, res) => saveEdit(ctx, req, res));

  return router;
}

/** POST /workflows/{id}/edit: saves the form over the version it started from, or shows it again saying why not. */
async function saveEdit(ctx: AppContext, req: Request<{ id: string }>, res: Response): Promise<void> {
  const user = await pageUser(ctx, req);
  const workflow = await getWorkflow(ctx, user.id, req.params.id).catch((err: unknown) => void refusedWith(err, 404));
  if (!workflow) return sendPage(res, 404, notFoundPage(user, 'workflow'));
  const form = formOf(req);
  const version = versionOf(req);
  const page = (status: number, extra: { problems?: Problem['errors']; conflictVersion?: number }) =>
    sendPage(
      res,
      status,
      editorPage({
        models: servedModels(ctx.config),
        user,
        workflow,
        ...form,
        version,
        problems: extra.problems ?? [],
        conflictVersion: extra.conflictVersion,
      }),
    );
  const checked = checkEditorForm(ctx, form);
  if ('problems' in checked) return page(422, { problems: checked.problems });
  try {
    // Without a version (a form from before this field existed), `*`: the workflow as it is now.
    await updateWorkflow(ctx, user.id, workflow.id, checked.body, version === undefined ? '*' : `"${version}"`);
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    if (err.status === 404) return sendPage(res, 404, notFoundPage(user, 'workflow'));
    // A storage quota is no edit conflict: its page names the limit.
    if (err.code === 'quota_exceeded') throw err;
    if (err.status === 412 || err.status === 409) {
      const current = await getWorkflow(ctx, user.id, workflow.id).catch(() => workflow);
      return page(409, { conflictVersion: current.version });
    }
    if (err.status === 422 && err.errors) return page(422, { problems: err.errors });
    throw err;
  }
  res.redirect(303, `/workflows/${workflow.id}?done=workflow-saved`);
}
