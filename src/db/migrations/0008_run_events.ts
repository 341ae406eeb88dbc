import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// The events of a run's stream (GET .../runs/{run_id}/events): stored so that any API process
// serves any run's stream whoever executes it, and a client resuming with Last-Event-ID loses
// nothing. `seq` numbers a run's events from 1 (the SSE `id:`); (run_id, seq) is unique, so two
// writers of one run (its worker and a cancel) cannot both take the same number.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('run_events', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.string('run_id', 40).notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.string('type', 32).notNullable();
    t.text('data', 'longtext').notNullable(); // JSON; a node's output may be 200000 characters
    t.bigInteger('created_at').notNullable();
    t.primary(['run_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('run_events');
}
