// The problems of monthly budgets (monthlyBudgets.ts), by name. Their codes are in the one catalogue
// (src/shared/errors.ts PROBLEM_CODES, which openapi.yaml's Problem.code lists).
import { Problem } from '../shared/errors.ts';

export const pricesNotConfigured = () =>
  new Problem(
    'prices_not_configured',
    'No price table is configured (MODEL_PRICES): runs have no cost, so a budget cannot be set.',
  );

/** A spent budget: a 429 like the run quotas, retried when the month (UTC) ends. */
export const budgetExhausted = (
  what: string,
  spent: { limit: number; spent: number; currency: string; periodStart: string; periodEnd: string },
  retryAfter: number,
) =>
  new Problem(
    'budget_exhausted',
    `The monthly budget of ${what} is spent: ${spent.spent} of ${spent.limit} ${spent.currency} since ${spent.periodStart}; it resets at ${spent.periodEnd}.`,
    { headers: { 'Retry-After': String(retryAfter) } },
  );
