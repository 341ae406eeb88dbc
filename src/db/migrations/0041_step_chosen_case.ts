import type { Knex } from 'knex';

// The case a switch's step chose (its `case` edges were followed): written when the step ends, so
// a run's page and a client of its steps or events say which way the run went instead of
// inferring it from the nodes that ran. Null for every other node type and for steps logged
// before this column (those keep the derived label). Case names are at most 64 characters
// (openapi.yaml SwitchNode), `default` included.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.string('chosen_case', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('chosen_case');
  });
}
