import type { Knex } from 'knex';

// What a run and each of its steps cost (src/shared/prices.ts): integers in billionths of the
// price table's currency, so sums never drift the way floats do. `cost_nanos` is the total (a
// budget reads it), `cost_input_nanos` its part for input tokens (cached ones included; the
// output's part is the difference), `cost_currency` the ISO 4217 code the prices were in when the
// step ran, so a later change of the table rewrites no past run. All null when no priced model was
// involved. Cached input tokens stay in the `usage` JSON (`cached_tokens`), as the other counts.

const COLUMNS = ['cost_nanos', 'cost_input_nanos', 'cost_currency'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of ['runs', 'run_steps']) {
    await knex.schema.alterTable(table, (t) => {
      t.bigInteger('cost_nanos').nullable();
      t.bigInteger('cost_input_nanos').nullable();
      t.string('cost_currency', 3).nullable();
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['run_steps', 'runs']) {
    await knex.schema.alterTable(table, (t) => {
      for (const c of COLUMNS) t.dropColumn(c);
    });
  }
}
