import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import type { SharedRateLimiter } from '../../http/sharedRateLimiter.ts';
import { streamRunEvents } from '../../runs/eventStream.ts';
import * as runs from '../../runs/service.ts';
import { TOTAL_PERIODS, workflowTotals, type TotalPeriod } from '../../runs/totals.ts';
import { listSchedules, MAX_SCHEDULES_PER_WORKFLOW } from '../../schedules/service.ts';
import { listCallbacks, MAX_CALLBACKS_PER_WORKFLOW } from '../../hooks/callbacks.ts';
import { Problem } from '../../shared/errors.ts';
import { getWorkflow, listWorkflows, type Workflow } from '../../workflows/service.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { runPage, runState, runTimelineOf } from '../views/runs.ts';
import { inputField, inputVariables, workflowPage, workflowsPage, type RunFormState } from '../views/workflows.ts';
import { doneMessage, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';
import { findWorkflowBudget } from '../../runs/monthlyBudgets.ts';
import { tableCurrency } from '../../shared/prices.ts';
import { MCP_PATH } from '../../mcp/router.ts';

// /workflows: the signed-in user's workflows and runs (another user's id is simply not found, as
// in the API). Runs start through the same service as POST /api/workflows/{id}/run: the same
// input rules, the same queue, and the same per-minute allowance as one API key.

const PER_PAGE = 20;

/** `?page=N`: a positive integer, else the first page. */
function pageOf(req: Request): number {
  const page = Number(req.query.page);
  return Number.isSafeInteger(page) && page >= 1 && page <= 1_000_000 ? page : 1;
}

/** `?search=`: a run status or the start of a run id, as the API's listRuns takes it (at most 200 characters). */
function searchOf(req: Request): string {
  const search = typeof req.query.search === 'string' ? req.query.search.trim() : '';
  return search.length <= 200 && !search.includes('\u0000') ? search : '';
}

/** `?period=`: the totals' period (24h, 7d or 30d), else the last 7 days. */
function periodOf(req: Request): TotalPeriod {
  const period = req.query.period;
  return typeof period === 'string' && Object.hasOwn(TOTAL_PERIODS, period) ? (period as TotalPeriod) : '7d';
}

/** A form field as sent (run inputs keep their whitespace); '' when absent. */
function rawField(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

async function showWorkflow(
  ctx: AppContext,
  req: Request,
  res: Response,
  status: number,
  user: PageUser,
  workflow: Workflow,
  form: RunFormState,
): Promise<void> {
  const search = searchOf(req);
  const [history, schedules, callbacks, budget, totals] = await Promise.all([
    runs.listRuns(ctx, user.id, workflow.id, { page: pageOf(req), perPage: PER_PAGE, ...(search ? { search } : {}) }),
    listSchedules(ctx, user.id, workflow.id, { page: 1, perPage: MAX_SCHEDULES_PER_WORKFLOW }), // all of them: one page
    listCallbacks(ctx, user.id, workflow.id, { page: 1, perPage: MAX_CALLBACKS_PER_WORKFLOW }),
    findWorkflowBudget(ctx, user.id, workflow.id),
    workflowTotals(ctx, user.id, workflow.id, periodOf(req)),
  ]);
  const model = {
    user,
    workflow,
    runs: history.data,
    runsMeta: history.meta,
    form,
    search,
    baseUrl: ctx.config.BASE_URL,
    schedules: schedules.data,
    callbacks: callbacks.data,
    budget: { user, action: `/workflows/${workflow.id}/budget`, budget, currency: tableCurrency(ctx.config) },
    totals,
    mcp: {
      user,
      workflow,
      url: new URL(MCP_PATH, ctx.config.BASE_URL).toString(),
      selfRegistration: ctx.config.CLIENT_REGISTRATION !== 'off',
    },
  };
  sendPage(res, status, workflowPage({ ...model, flash: doneMessage(req) }));
}

/** `?inputs_from=RUN`: the inputs of one of the workflow's runs, to run again after editing; none when it is not there. */
async function inputsOf(
  ctx: AppContext,
  user: PageUser,
  workflow: Workflow,
  runId: unknown,
): Promise<Record<string, string>> {
  if (typeof runId !== 'string' || !/^run_[0-9A-Za-z]{1,40}$/.test(runId)) return {};
  const run = await runs.getRun(ctx, user.id, workflow.id, runId).catch((err: unknown) => void refusedWith(err, 404));
  return (run?.inputs as Record<string, string> | undefined) ?? {};
}

/** The user's workflow; or, when it is not theirs or not there, the 404 page is sent and undefined returned. */
async function workflowOrNotFoundPage(
  ctx: AppContext,
  res: Response,
  user: PageUser,
  workflowId: string,
): Promise<Workflow | undefined> {
  try {
    return await getWorkflow(ctx, user.id, workflowId);
  } catch (err) {
    refusedWith(err, 404);
    sendPage(res, 404, notFoundPage(user, 'workflow'));
    return undefined;
  }
}

/** A blank run form with a new idempotency key (one key per form shown, so a resend is one run). */
function freshForm(): RunFormState {
  return { idempotencyKey: `console-${randomUUID()}`, values: {}, problems: [] };
}

/** The run, its graph snapshot and the workflow's name; undefined when it is not the user's. */
async function findRun(ctx: AppContext, user: PageUser, workflowId: string, runId: string) {
  try {
    const { run, graph, marks } = await runs.getRunWithGraph(ctx, user.id, workflowId, runId, { marks: true });
    const workflow = await getWorkflow(ctx, user.id, workflowId).catch((err: unknown) => {
      refusedWith(err, 404);
      return undefined; // deleted, its runs still readable for a while
    });
    return { run, graph, marks, now: ctx.now(), workflow, workflowId, workflowName: workflow?.name ?? workflowId };
  } catch (err) {
    refusedWith(err, 404);
    return undefined;
  }
}

export function workflowPagesRouter(ctx: AppContext, runStarts?: SharedRateLimiter): Router {
  const router = Router();
  workflowRoutes(router, ctx, runStarts);
  runRoutes(router, ctx);
  return router;
}

/** The workflows list, one workflow with its run history, and starting a run from its form. */
function workflowRoutes(router: Router, ctx: AppContext, runStarts?: SharedRateLimiter): void {
  router.get('/workflows', async (req, res) => {
    const user = await pageUser(ctx, req);
    const { data, meta } = await listWorkflows(ctx, user.id, { page: pageOf(req), perPage: PER_PAGE });
    const latest = await runs.latestRuns(
      ctx,
      user.id,
      data.map((w) => w.id),
    );
    sendPage(res, 200, workflowsPage({ user, workflows: data, latest, meta, flash: doneMessage(req) }));
  });

  router.get('/workflows/:id', async (req, res) => {
    const user = await pageUser(ctx, req);
    const workflow = await workflowOrNotFoundPage(ctx, res, user, req.params.id);
    if (!workflow) return;
    await showWorkflow(ctx, req, res, 200, user, workflow, {
      ...freshForm(),
      values: await inputsOf(ctx, user, workflow, req.query.inputs_from),
    });
  });

  router.post('/workflows/:id/run', (req, res) => startRunFromForm(ctx, req, res, runStarts));
}

/** POST /workflows/{id}/run: starts a run from the form, or shows the form again saying why not. */
async function startRunFromForm(
  ctx: AppContext,
  req: Request<{ id: string }>,
  res: Response,
  runStarts?: SharedRateLimiter,
): Promise<void> {
  const user = await pageUser(ctx, req);
  const workflow = await workflowOrNotFoundPage(ctx, res, user, req.params.id);
  if (!workflow) return;
  const variables = inputVariables(workflow.nodes);
  const values = Object.fromEntries(variables.map((v) => [v, rawField(req, inputField(v))]));
  const idempotencyKey = /^[A-Za-z0-9-]{1,100}$/.test(rawField(req, 'idempotency_key'))
    ? rawField(req, 'idempotency_key')
    : `console-${randomUUID()}`;
  const refuse = (status: number, problems: FormProblem[], key = idempotencyKey) =>
    showWorkflow(ctx, req, res, status, user, workflow, { idempotencyKey: key, values, problems });

  // The console asks for text in every input (the API also takes an empty string).
  const empty = variables.filter((v) => values[v]!.trim() === '');
  if (empty.length)
    return refuse(
      400,
      empty.map((v) => ({ field: inputField(v), message: `Enter the ${v}.` })),
    );

  try {
    // A typed text_input's field holds JSON (`42`, `{"amount": 5}`): parsed, then checked as the API checks it.
    const { run } = await runs.startRun(
      ctx,
      user.id,
      workflow.id,
      runs.inputsFromText(workflow.nodes, values),
      idempotencyKey,
      runStarts,
    );
    res.redirect(303, `/workflows/${workflow.id}/runs/${run.id}`);
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    if (err.status === 404) return sendPage(res, 404, notFoundPage(user, 'workflow'));
    if (err.status === 400 && err.errors?.length) {
      return refuse(
        400,
        err.errors.map((e) => ({
          field: inputField(e.pointer.slice('/body/inputs/'.length)),
          message: `${e.pointer.slice('/body/inputs/'.length)} ${e.message}.`,
        })),
      );
    }
    // The same form sent again after its inputs changed (the back button): a fresh key runs it anew.
    if (err.status === 409)
      return refuse(
        409,
        [{ message: 'This form already started a run with other inputs. Check the inputs and run again.' }],
        `console-${randomUUID()}`,
      );
    // The run quotas (429) and an unavailable queue (503) say what to do in their message.
    if (err.status === 503 || err.status === 429) {
      for (const [name, value] of Object.entries(err.headers)) res.set(name, value);
      return refuse(err.status, [{ message: err.message }]);
    }
    throw err;
  }
}

/** One run: its page, its live event stream and its fallback state. */
function runRoutes(router: Router, ctx: AppContext): void {
  router.get('/workflows/:id/runs/:runId', async (req, res) => {
    const user = await pageUser(ctx, req);
    const found = await findRun(ctx, user, req.params.id, req.params.runId);
    if (!found) return sendPage(res, 404, notFoundPage(user, 'run'));
    sendPage(res, 200, runPage({ user, ...found, baseUrl: ctx.config.BASE_URL, flash: doneMessage(req) }));
  });

  // The live page's feed: the run's event stream, as GET /api/workflows/{id}/runs/{run_id}/events
  // serves it (the same code), authenticated by the session cookie an EventSource sends (it cannot
  // send an API key). Another user's run, or none, is a 404 before anything is streamed.
  // Without a queue here, the stream's 503 makes the page fall back to reading the state.
  router.get('/workflows/:id/runs/:runId/events', async (req, res) => {
    const userId = req.webSession!.uid!;
    await streamRunEvents(
      ctx,
      req,
      res,
      req.params.runId,
      () => runs.getRun(ctx, userId, req.params.id, req.params.runId),
      { userId },
    );
  });

  // The live page's fallback (no EventSource, or its stream failed): the changing part of the run
  // page alone. `X-Run-Status` tells the script when the run has ended, so it stops asking.
  router.get('/workflows/:id/runs/:runId/state', async (req, res) => {
    const user = await pageUser(ctx, req);
    const found = await findRun(ctx, user, req.params.id, req.params.runId);
    if (!found) return res.status(404).set('Cache-Control', 'no-store').type('text').send('No such run.');
    res.set('X-Run-Status', found.run.status);
    sendPage(res, 200, runState(found));
  });

  // The live page's timeline alone, read again when a node starts, ends, waits or is retried (the rest of the page follows the
  // events themselves).
  router.get('/workflows/:id/runs/:runId/timeline', async (req, res) => {
    const user = await pageUser(ctx, req);
    const found = await findRun(ctx, user, req.params.id, req.params.runId);
    if (!found) return res.status(404).set('Cache-Control', 'no-store').type('text').send('No such run.');
    res.set('X-Run-Status', found.run.status);
    sendPage(res, 200, runTimelineOf(found));
  });
}
