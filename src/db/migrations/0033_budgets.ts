import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Monthly budgets (src/runs/budgets.ts): a limit per workflow or per API key, and what a run start
// reads to enforce it.
// - `runs.access_token_id`: the API key (access token) that started the run; null for every other
//   start (the console, an OAuth client, a trigger URL, a schedule, runs from before this).
//   Not a foreign key: a deleted key's runs stay as they were, and ids are never reused.
// - A run start sums `runs.cost_nanos` of the workflow's (or the key's) runs started this month
//   in the budget's currency: the indexes on (workflow_id, cost_currency, created_at, cost_nanos)
//   and (access_token_id, ...) answer that sum from the index alone (the equalities, then the
//   month's range), whatever the number of runs.
// - `budgets`: one row per workflow or key (`scope`, `target_id`: the workflow id, or the key's
//   id in decimal), its limit in billionths of `currency` (the price table's when it was set).

export const BUDGET_TABLES = ['budgets'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.integer('access_token_id').unsigned().nullable();
    t.index(['workflow_id', 'cost_currency', 'created_at', 'cost_nanos'], 'runs_workflow_month_cost');
    t.index(['access_token_id', 'cost_currency', 'created_at', 'cost_nanos'], 'runs_key_month_cost');
  });
  await knex.schema.createTable('budgets', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('scope', 16).notNullable(); // 'workflow' | 'api_key'
    t.string('target_id', 40) // a workflow id (40 like every public id) or a key id.notNullable();
    t.bigInteger('limit_nanos').notNullable();
    t.string('currency', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['scope', 'target_id']);
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('budgets');
  await knex.schema.alterTable('runs', (t) => {
    t.dropIndex(['workflow_id', 'cost_currency', 'created_at', 'cost_nanos'], 'runs_workflow_month_cost');
    t.dropIndex(['access_token_id', 'cost_currency', 'created_at', 'cost_nanos'], 'runs_key_month_cost');
    t.dropColumn('access_token_id');
  });
}
