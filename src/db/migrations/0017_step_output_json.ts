import type { Knex } from 'knex';

// Typed values: a node's output may be a JSON value other than a string. Its log keeps
// the JSON text in output_preview (RunStep.output stays text), and this flag says so, so that the
// API can give the value back (RunStep.output_value): a string output whose text happens to be
// JSON is not mistaken for one.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.boolean('output_json').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('output_json');
  });
}
