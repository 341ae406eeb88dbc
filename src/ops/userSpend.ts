// What users spent on models lately, read from the store when /metrics is scraped (so every
// process's runs count, the workers' too): a gauge per measure, naming only the TOP_SPENDERS users
// who spent most and summing the rest as "other", so the label set stays bounded.
import type { Knex } from 'knex';
import { Gauge, type Registry } from 'prom-client';
import { dialectOf } from '../db/knex.ts';

/** Users named in workflow_user_cost_24h; the others are summed as "other", so the label set stays bounded. */
export const TOP_SPENDERS = 10;
const DAY_MS = 24 * 3600 * 1000;

/** Runs that ended in the last 24 hours with `column` set, over the runs' (status, finished_at) index. */
function endedLastDay(db: Knex, now: () => number, column: 'cost_nanos' | 'usage'): Knex.QueryBuilder {
  return db('runs')
    .whereIn('status', ['completed', 'failed', 'cancelled'])
    .where('finished_at', '>=', now() - DAY_MS)
    .whereNotNull(column);
}

/**
 * What runs that ended in the last 24 hours cost, by user (their id) and currency: the
 * TOP_SPENDERS users who spent most, and "other" for the rest. Read from the store (every
 * process's runs) over the runs' (status, finished_at) index.
 */
function userCostGauge(db: Knex, now: () => number, registry: Registry): void {
  new Gauge({
    name: 'workflow_user_cost_24h',
    help: `What runs that ended in the last 24 hours cost (units of the currency), by user id for the ${TOP_SPENDERS} users who spent most ("other": the rest) and currency`,
    labelNames: ['user', 'currency'] as const,
    registers: [registry],
    async collect() {
      const recent = () => endedLastDay(db, now, 'cost_nanos');
      type Sum = { user_id?: number; cost_currency: string; nanos: number | string | null };
      const [top, totals] = (await Promise.all([
        recent()
          .select('user_id', 'cost_currency')
          .sum({ nanos: 'cost_nanos' })
          .groupBy('user_id', 'cost_currency')
          .orderBy('nanos', 'desc')
          .limit(TOP_SPENDERS),
        recent().select('cost_currency').sum({ nanos: 'cost_nanos' }).groupBy('cost_currency'),
      ])) as [Sum[], Sum[]];
      this.reset();
      const rest = new Map(totals.map((t) => [t.cost_currency, Number(t.nanos ?? 0)]));
      for (const row of top) {
        this.set({ user: String(row.user_id), currency: row.cost_currency }, Number(row.nanos ?? 0) / 1e9);
        rest.set(row.cost_currency, (rest.get(row.cost_currency) ?? 0) - Number(row.nanos ?? 0));
      }
      for (const [currency, nanos] of rest) if (nanos > 0) this.set({ user: 'other', currency }, nanos / 1e9);
    },
  });
}

/**
 * The tokens (input, cached input included, plus output) of runs that ended in the last 24 hours,
 * by user id for the TOP_SPENDERS users who used most, "other" for the rest. Runs keep their usage
 * as JSON text: summed by the store's own JSON functions.
 */
function userTokensGauge(db: Knex, now: () => number, registry: Registry): void {
  const tokens =
    dialectOf(db) === 'pg'
      ? `coalesce(("usage"::json->>'prompt_tokens')::bigint, 0) + coalesce(("usage"::json->>'completion_tokens')::bigint, 0)`
      : "coalesce(json_value(`usage`, '$.prompt_tokens'), 0) + coalesce(json_value(`usage`, '$.completion_tokens'), 0)"; // USAGE is a reserved word in MySQL
  new Gauge({
    name: 'workflow_user_tokens_24h',
    help: `Tokens (input and output) of runs that ended in the last 24 hours, by user id for the ${TOP_SPENDERS} users who used most ("other": the rest)`,
    labelNames: ['user'] as const,
    registers: [registry],
    async collect() {
      const recent = () => endedLastDay(db, now, 'usage');
      type Sum = { user_id?: number; n: number | string | null };
      const [top, total] = (await Promise.all([
        recent()
          .select('user_id', db.raw(`sum(${tokens}) as n`))
          .groupBy('user_id')
          .orderBy('n', 'desc')
          .limit(TOP_SPENDERS),
        recent().select(db.raw(`sum(${tokens}) as n`)),
      ])) as [Sum[], Sum[]];
      this.reset();
      let rest = Number(total[0]?.n ?? 0);
      for (const row of top) {
        const n = Number(row.n ?? 0);
        if (n <= 0) continue;
        this.set({ user: String(row.user_id) }, n);
        rest -= n;
      }
      if (rest > 0) this.set({ user: 'other' }, rest);
    },
  });
}

/** The users' cost and tokens gauges, in `registry`. */
export function userSpendGauges(db: Knex, now: () => number, registry: Registry): void {
  userCostGauge(db, now, registry);
  userTokensGauge(db, now, registry);
}
