import type { Knex } from 'knex';

// A run's steps read a page at a time (listRunSteps, and getRun's bounded logs): `run_id = ? AND
// id > ? ORDER BY id LIMIT n` walks this index from the cursor on, never the run's whole log.

const TABLE = 'run_steps';
const INDEX = 'run_steps_run_id_id_index';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.index(['run_id', 'id'], INDEX);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropIndex(['run_id', 'id'], INDEX);
  });
}
