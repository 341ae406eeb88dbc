// SQL of monthly budgets (monthlyBudgets.ts): the `budgets` rows, and what a workflow's or an API
// key's runs started in a period cost (migration 0033's indexes answer the sum from the index).
import type { Knex } from 'knex';

export type BudgetScope = 'workflow' | 'api_key';

export interface BudgetRow {
  id: number;
  user_id: number;
  scope: BudgetScope;
  /** The workflow's id, or the API key's id in decimal. */
  target_id: string;
  limit_nanos: number;
  currency: string;
  created_at: number;
  updated_at: number;
}

export async function findBudget(db: Knex, scope: BudgetScope, targetId: string): Promise<BudgetRow | undefined> {
  const row = await db<BudgetRow>('budgets').where({ scope, target_id: targetId }).first();
  return row && { ...row, limit_nanos: Number(row.limit_nanos) };
}

export async function listBudgetsOfUser(db: Knex, userId: number, scope: BudgetScope): Promise<BudgetRow[]> {
  const rows: BudgetRow[] = await db<BudgetRow>('budgets').where({ user_id: userId, scope }).orderBy('id');
  return rows.map((r) => ({ ...r, limit_nanos: Number(r.limit_nanos) }));
}

/** Both budgets a run start may meet, in one read: the workflow's, and the starting key's. */
export async function findBudgetsOfStart(
  db: Knex,
  workflowId: string,
  accessTokenId: number | undefined,
): Promise<BudgetRow[]> {
  const query = db<BudgetRow>('budgets').where({ scope: 'workflow', target_id: workflowId });
  if (accessTokenId !== undefined) query.orWhere({ scope: 'api_key', target_id: String(accessTokenId) });
  const rows: BudgetRow[] = await query;
  return rows.map((r) => ({ ...r, limit_nanos: Number(r.limit_nanos) }));
}

/** Sets the limit of a workflow's or key's budget, creating it: the unique (scope, target_id) decides which. */
export async function putBudget(
  db: Knex,
  row: Omit<BudgetRow, 'id' | 'created_at' | 'updated_at'>,
  now: number,
): Promise<void> {
  await db('budgets')
    .insert({ ...row, created_at: now, updated_at: now })
    .onConflict(['scope', 'target_id'])
    .merge(['limit_nanos', 'currency', 'updated_at']);
}

export async function deleteBudget(db: Knex, userId: number, scope: BudgetScope, targetId: string): Promise<number> {
  return db('budgets').where({ user_id: userId, scope, target_id: targetId }).delete();
}

/** What the runs of `scope`'s target started in [from, to) cost, in nanos of `currency`. */
export async function spentNanos(
  db: Knex,
  scope: BudgetScope,
  targetId: string,
  currency: string,
  from: number,
  to: number,
): Promise<number> {
  // Compared with 'api_key': 'workflow' is also a node type's name, which only the node registry compares.
  const column = scope === 'api_key' ? 'access_token_id' : 'workflow_id';
  const target = scope === 'api_key' ? Number(targetId) : targetId;
  const row = (await db('runs')
    .where(column, target)
    .andWhere('created_at', '>=', from)
    .andWhere('created_at', '<', to)
    .andWhere('cost_currency', currency)
    .sum({ spent: 'cost_nanos' })
    .first()) as { spent: string | number | null } | undefined;
  return Number(row?.spent ?? 0);
}
