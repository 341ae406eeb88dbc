import type { Knex } from 'knex';

// A trigger's own reading of what its sender sends: input name -> Liquid template over the
// body, headers and query (src/hooks/hookInputs.ts), as JSON text; null reads the body by default.

const TABLE = 'workflow_triggers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.text('inputs').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropColumn('inputs');
  });
}
