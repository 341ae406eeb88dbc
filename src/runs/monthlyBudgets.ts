// Monthly budgets: the most a workflow's runs, or the runs an API key starts, may cost per calendar
// month (UTC), in the price table's currency (MODEL_PRICES). A run start meets them before it is
// stored (startRun, and a node test): once this month's spend has reached a limit, it is refused
// with `budget_exhausted` (429, Retry-After until the month ends, as the run quotas are 429s). The
// spend is what the runs started this month cost (runs.cost_nanos, written when a run ends), read
// with one indexed sum per budget the start meets; a start without budgets reads only the
// `budgets` table. Runs in flight are not stopped, and concurrent starts may each pass the check,
// so the spend can pass a limit by what those runs cost: a budget bounds starts, not calls.
import type { components } from '../../generated/api.d.ts';
import { findWorkflowForRuns, type WorkflowContext } from '../workflows/service.ts';
import { listAccessTokensOfUser } from '../accounts/accessTokens.ts';
import { accessTokenNotFound, workflowNotFound } from '../shared/errors.ts';
import { tableCurrency } from '../shared/prices.ts';
import { budgetExhausted, pricesNotConfigured } from './budgetErrors.ts';
import * as store from './monthlyBudgetsStore.ts';
import type { BudgetRow, BudgetScope } from './monthlyBudgetsStore.ts';

export type { BudgetScope } from './monthlyBudgetsStore.ts';

/** The contract's Budget: amounts in units of `currency`; without a budget, its limit and remaining are null. */
export type Budget = components['schemas']['Budget'];

/** What a budget is set on: a workflow of the user's, or one of the user's API keys (its id). */
export type BudgetTarget = { scope: 'workflow'; workflowId: string } | { scope: 'api_key'; tokenId: number };

const NANOS = 1_000_000_000;
const toUnits = (nanos: number) => Number((nanos / NANOS).toFixed(9));

/** The calendar month (UTC) `at` falls in: its first millisecond and the next month's. */
export function monthOf(at: number): { start: number; end: number } {
  const d = new Date(at);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

const targetIdOf = (target: BudgetTarget) => (target.scope === 'api_key' ? String(target.tokenId) : target.workflowId);

/** How a problem names the budget's target. */
function nameOf(scope: BudgetScope, targetId: string): string {
  return scope === 'api_key' ? `API key ${targetId}` : `workflow ${targetId}`;
}

/** 404 unless the workflow is the user's: another user's is not found, as elsewhere. */
async function requireWorkflow(ctx: WorkflowContext, userId: number, workflowId: string): Promise<BudgetTarget> {
  const { deleted } = await findWorkflowForRuns(ctx, userId, workflowId);
  if (deleted) throw workflowNotFound(workflowId);
  return { scope: 'workflow', workflowId };
}

/** 404 unless the API key is one of the user's (any of their namespaces). */
async function requireApiKey(ctx: WorkflowContext, userId: number, tokenId: number): Promise<BudgetTarget> {
  const keys = await listAccessTokensOfUser(ctx, userId);
  if (!keys.some((k) => k.id === tokenId)) throw accessTokenNotFound(tokenId);
  return { scope: 'api_key', tokenId };
}

async function budgetOf(ctx: WorkflowContext, row: BudgetRow): Promise<Budget> {
  const { start, end } = monthOf(ctx.now());
  const spent = await store.spentNanos(ctx.db, row.scope, row.target_id, row.currency, start, end);
  return {
    monthly_limit: toUnits(row.limit_nanos),
    currency: row.currency,
    spent: toUnits(spent),
    remaining: toUnits(Math.max(0, row.limit_nanos - spent)),
    period_start: new Date(start).toISOString(),
    period_end: new Date(end).toISOString(),
  };
}

/** The target's budget, or (none set) this month's spend in the price table's currency with a null limit. */
async function readBudget(ctx: WorkflowContext, userId: number, target: BudgetTarget): Promise<Budget> {
  const row = await store.findBudget(ctx.db, target.scope, targetIdOf(target));
  if (row && row.user_id === userId) return budgetOf(ctx, row);
  const { start, end } = monthOf(ctx.now());
  const currency = tableCurrency(ctx.config);
  const spent = currency ? await store.spentNanos(ctx.db, target.scope, targetIdOf(target), currency, start, end) : 0;
  return {
    monthly_limit: null,
    currency,
    spent: toUnits(spent),
    remaining: null,
    period_start: new Date(start).toISOString(),
    period_end: new Date(end).toISOString(),
  };
}

/**
 * Sets the target's monthly limit (`monthlyLimit` in units of the price table's currency, taken
 * to 10^-9): 409 `prices_not_configured` without a price table, since no run would have a cost.
 */
async function setBudget(
  ctx: WorkflowContext,
  userId: number,
  target: BudgetTarget,
  monthlyLimit: number,
): Promise<Budget> {
  const currency = tableCurrency(ctx.config);
  if (!currency) throw pricesNotConfigured();
  // The contract bounds it to [1e-9, 1e9]: at least one nano, at most 1e18 (a BIGINT holds 9.2e18).
  const limitNanos = Math.max(1, Math.round(monthlyLimit * NANOS));
  const row = {
    user_id: userId,
    scope: target.scope,
    target_id: targetIdOf(target),
    limit_nanos: limitNanos,
    currency,
  };
  await store.putBudget(ctx.db, row, ctx.now());
  return budgetOf(ctx, { ...row, id: 0, created_at: 0, updated_at: 0 });
}

/** Idempotent (RFC 9110 9.2.2): removing a budget that is not there leaves what was asked for. */
async function removeBudget(ctx: WorkflowContext, userId: number, target: BudgetTarget): Promise<void> {
  await store.deleteBudget(ctx.db, userId, target.scope, targetIdOf(target));
}

// Each operation checks its own kind of target (a workflow's 404, or a key's), then reads or writes the budget.
export const getWorkflowBudget = async (ctx: WorkflowContext, userId: number, workflowId: string) =>
  readBudget(ctx, userId, await requireWorkflow(ctx, userId, workflowId));
export const putWorkflowBudget = async (ctx: WorkflowContext, userId: number, workflowId: string, limit: number) =>
  setBudget(ctx, userId, await requireWorkflow(ctx, userId, workflowId), limit);
export const deleteWorkflowBudget = async (ctx: WorkflowContext, userId: number, workflowId: string) =>
  removeBudget(ctx, userId, await requireWorkflow(ctx, userId, workflowId));
export const getApiKeyBudget = async (ctx: WorkflowContext, userId: number, tokenId: number) =>
  readBudget(ctx, userId, await requireApiKey(ctx, userId, tokenId));
export const putApiKeyBudget = async (ctx: WorkflowContext, userId: number, tokenId: number, limit: number) =>
  setBudget(ctx, userId, await requireApiKey(ctx, userId, tokenId), limit);
export const deleteApiKeyBudget = async (ctx: WorkflowContext, userId: number, tokenId: number) =>
  removeBudget(ctx, userId, await requireApiKey(ctx, userId, tokenId));

/** The workflow's budget, or undefined when it has none (the console's workflow page; the workflow is the user's). */
export async function findWorkflowBudget(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
): Promise<Budget | undefined> {
  const row = await store.findBudget(ctx.db, 'workflow', workflowId);
  return row && row.user_id === userId ? budgetOf(ctx, row) : undefined;
}

/** The budgets of the user's API keys, by key id (the console's access-token page). */
export async function apiKeyBudgetsOfUser(ctx: WorkflowContext, userId: number): Promise<Map<number, Budget>> {
  const rows = await store.listBudgetsOfUser(ctx.db, userId, 'api_key');
  const budgets = await Promise.all(
    rows.map(async (row) => [Number(row.target_id), await budgetOf(ctx, row)] as const),
  );
  return new Map(budgets);
}

/**
 * Refuses a run start (or a node test) that a spent budget forbids: the workflow's, and the API
 * key's that starts it (`accessTokenId`; none for the console, triggers and schedules).
 */
export async function checkBudgets(
  ctx: WorkflowContext,
  workflowId: string,
  accessTokenId: number | undefined,
): Promise<void> {
  const rows = await store.findBudgetsOfStart(ctx.db, workflowId, accessTokenId);
  for (const row of rows) {
    const budget = await budgetOf(ctx, row);
    if (budget.remaining === null || budget.remaining > 0) continue;
    const retryAfter = Math.max(1, Math.ceil((Date.parse(budget.period_end) - ctx.now()) / 1000));
    throw budgetExhausted(
      nameOf(row.scope, row.target_id),
      {
        limit: toUnits(row.limit_nanos),
        spent: budget.spent,
        currency: row.currency,
        periodStart: budget.period_start,
        periodEnd: budget.period_end,
      },
      retryAfter,
    );
  }
}
