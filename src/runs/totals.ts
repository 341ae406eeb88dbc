import type { WorkflowContext } from '../workflows/service.ts';
import { workflowTotalsSince } from './totals.store.ts';

// A workflow's runs, tokens and cost over the last day, week or month (the console's workflow page).

export const TOTAL_PERIODS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type TotalPeriod = keyof typeof TOTAL_PERIODS;

export interface WorkflowTotals {
  period: TotalPeriod;
  runs: number;
  tokens: number;
  /** The cost in each currency its runs were priced in (one, unless the price table's changed); none without a priced model. */
  costs: Array<{ currency: string; total: number }>;
}

/** The user's runs of the workflow created in the period up to now (the caller has checked the workflow is theirs). */
export async function workflowTotals(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  period: TotalPeriod,
): Promise<WorkflowTotals> {
  const row = await workflowTotalsSince(ctx.db, userId, workflowId, ctx.now() - TOTAL_PERIODS[period]);
  return {
    period,
    runs: row.runs,
    tokens: row.tokens,
    costs: row.costs.map((c) => ({ currency: c.currency, total: c.nanos / 1_000_000_000 })),
  };
}
