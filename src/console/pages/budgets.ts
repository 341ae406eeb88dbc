import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { listAccessTokensOfUser } from '../../accounts/accessTokens.ts';
import { tableCurrency } from '../../shared/prices.ts';
import { getWorkflow } from '../../workflows/service.ts';
import * as budgets from '../../runs/monthlyBudgets.ts';
import { budgetPage, type BudgetModel } from '../views/budgets.ts';
import type { PageUser } from '../views/format.ts';
import { WORKFLOWS_NAV } from '../views/workflows.ts';
import { field, formProblemsOf, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// Monthly budgets in the console: a workflow's (its page's section posts here) and an API key's
// (/settings/tokens/{id}/budget), set and removed through the API's own rules (monthlyBudgets.ts).
// A refused form is shown again on the budget's own page with the problem at its field.

/** What the form's text may say: a plain decimal from 10^-9 to 10^9, as the API's BudgetPut allows. */
const LIMIT = /^\d{1,10}(\.\d{1,9})?$/;

function limitOf(req: Request): number | undefined {
  const text = field(req, 'monthly_limit');
  const limit = LIMIT.test(text) ? Number(text) : NaN;
  return limit > 0 && limit <= 1e9 ? limit : undefined;
}

const LIMIT_PROBLEM = {
  field: 'monthly_limit',
  message: 'Enter an amount above 0 and at most 1000000000, with at most 9 decimals (such as 25 or 12.5).',
};

/** One kind of target: how to find it (404 otherwise) and its budget, and where its pages are. */
interface Target {
  what: string;
  title: (name: string) => string;
  back: (id: string, name: string) => { href: string; label: string };
  current: string;
  /** Its name, or undefined when it is not the user's. */
  find: (user: PageUser, id: string) => Promise<string | undefined>;
  read: (user: PageUser, id: string) => Promise<budgets.Budget | undefined>;
  put: (user: PageUser, id: string, limit: number) => Promise<unknown>;
  remove: (user: PageUser, id: string) => Promise<unknown>;
  done: (id: string) => string;
}

function targets(ctx: AppContext): { workflow: Target; apiKey: Target } {
  const keyName = async (user: PageUser, id: string) =>
    (await listAccessTokensOfUser(ctx, user.id)).find((t) => String(t.id) === id)?.name;
  return {
    workflow: {
      what: 'workflow',
      title: (name) => `Monthly budget of ${name}`,
      back: (id, name) => ({ href: `/workflows/${id}`, label: name }),
      current: WORKFLOWS_NAV,
      find: (user, id) =>
        getWorkflow(ctx, user.id, id).then(
          (w) => w.name,
          (err: unknown) => void refusedWith(err, 404),
        ),
      read: (user, id) => budgets.findWorkflowBudget(ctx, user.id, id),
      put: (user, id, limit) => budgets.putWorkflowBudget(ctx, user.id, id, limit),
      remove: (user, id) => budgets.deleteWorkflowBudget(ctx, user.id, id),
      done: (id) => `/workflows/${id}?done=budget-set#budget-heading`,
    },
    apiKey: {
      what: 'access token',
      title: (name) => `Monthly budget of the key ${name}`,
      back: () => ({ href: '/settings/tokens', label: 'Access tokens' }),
      current: '/settings/tokens',
      find: keyName,
      read: async (user, id) => (await budgets.apiKeyBudgetsOfUser(ctx, user.id)).get(Number(id)),
      put: (user, id, limit) => budgets.putApiKeyBudget(ctx, user.id, Number(id), limit),
      remove: (user, id) => budgets.deleteApiKeyBudget(ctx, user.id, Number(id)),
      done: () => '/settings/tokens?done=budget-set',
    },
  };
}

export function budgetPagesRouter(ctx: AppContext): Router {
  const router = Router();
  const { workflow, apiKey } = targets(ctx);

  async function show(
    res: Response,
    status: number,
    user: PageUser,
    target: Target,
    id: string,
    name: string,
    form: Pick<BudgetModel, 'problems' | 'input'> = {},
  ) {
    const base = target === workflow ? `/workflows/${id}/budget` : `/settings/tokens/${id}/budget`;
    const model = { user, action: base, budget: await target.read(user, id), currency: tableCurrency(ctx.config) };
    const page = { title: target.title(name), back: target.back(id, name), current: target.current };
    sendPage(res, status, budgetPage({ ...model, ...page, ...form }));
  }

  for (const [prefix, target] of [
    ['/workflows/:id/budget', workflow],
    ['/settings/tokens/:id/budget', apiKey],
  ] as const) {
    router.get(prefix, async (req, res) => {
      const user = await pageUser(ctx, req);
      const name = await target.find(user, req.params.id);
      if (name === undefined) return sendPage(res, 404, notFoundPage(user, target.what));
      await show(res, 200, user, target, req.params.id, name);
    });

    router.post(prefix, async (req, res) => {
      const user = await pageUser(ctx, req);
      const { id } = req.params;
      const name = await target.find(user, id);
      if (name === undefined) return sendPage(res, 404, notFoundPage(user, target.what));
      const limit = limitOf(req);
      const input = field(req, 'monthly_limit');
      if (limit === undefined) return show(res, 400, user, target, id, name, { problems: [LIMIT_PROBLEM], input });
      try {
        await target.put(user, id, limit);
      } catch (err) {
        // No price table (409), or the target gone since it was read (404).
        const problem = refusedWith(err, 404, 409);
        return show(res, problem.status, user, target, id, name, { problems: formProblemsOf(problem), input });
      }
      res.redirect(303, target.done(id));
    });

    router.post(`${prefix}/delete`, async (req, res) => {
      const user = await pageUser(ctx, req);
      const { id } = req.params;
      const name = await target.find(user, id);
      if (name === undefined) return sendPage(res, 404, notFoundPage(user, target.what));
      // Removing a budget that is already gone (another tab) leaves what was asked for: none.
      await target.remove(user, id).catch((err: unknown) => refusedWith(err, 404));
      res.redirect(303, target.done(id).replace('budget-set', 'budget-removed'));
    });
  }
  return router;
}
