import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';

// A workflow's totals over a period (the console's workflow page): its runs, their tokens and their
// cost, in one aggregate over the workflow's runs created since then, found by the runs'
// (workflow_id, seq) index. Tokens sit in the run's usage JSON (written when it ends), read with
// each dialect's JSON operator; costs are summed per currency (a price table's currency may have
// changed within the period, and sums across currencies mean nothing).

export interface WorkflowTotalsRow {
  runs: number;
  tokens: number;
  /** Total cost in nanos (billionths) of each currency the runs were priced in. */
  costs: Array<{ currency: string; nanos: number }>;
}

export async function workflowTotalsSince(
  db: Knex,
  userId: number,
  workflowId: string,
  since: number,
): Promise<WorkflowTotalsRow> {
  const tokens =
    dialectOf(db) === 'pg'
      ? db.raw(`coalesce(sum(cast(cast(?? as json)->>'total_tokens' as bigint)), 0) as tokens`, ['usage'])
      : db.raw(`coalesce(sum(cast(json_unquote(json_extract(??, '$.total_tokens')) as unsigned)), 0) as tokens`, [
          'usage',
        ]);
  const rows = (await db('runs')
    .where({ workflow_id: workflowId, user_id: userId })
    .andWhere('created_at', '>=', since)
    .groupBy('cost_currency')
    .select('cost_currency', tokens)
    .count({ runs: '*' })
    .sum({ nanos: 'cost_nanos' })) as Array<{
    cost_currency: string | null;
    runs: number | string;
    tokens: number | string | null;
    nanos: number | string | null;
  }>;
  return {
    runs: rows.reduce((n, r) => n + Number(r.runs), 0),
    tokens: rows.reduce((n, r) => n + Number(r.tokens ?? 0), 0),
    costs: rows
      .flatMap((r) => (r.cost_currency ? [{ currency: r.cost_currency, nanos: Number(r.nanos ?? 0) }] : []))
      .sort((a, b) => (a.currency < b.currency ? -1 : 1)),
  };
}
