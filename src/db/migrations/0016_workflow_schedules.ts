import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Cron schedules of workflows (listSchedules ... deleteSchedule). This table is
// the truth; pg-boss's schedule table (queue database) mirrors each enabled row under the key
// `id`, and a tick whose row is gone or disabled starts nothing (src/schedules/ticks.ts). A
// schedule goes with its workflow's row (FK cascade at the purge) and with its user.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workflow_schedules', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('seq');
    t.string('id', 40).notNullable().unique();
    t.string('workflow_id', 40).notNullable().references('id').inTable('workflows').onDelete('CASCADE');
    t.integer('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('cron', 200).notNullable();
    t.string('timezone', 64).notNullable();
    t.text('inputs', 'longtext').notNullable(); // JSON object of strings
    t.integer('version').nullable(); // pinned workflow version; NULL: the current one
    t.boolean('enabled').notNullable();
    t.string('last_run_id', 40).nullable();
    t.bigInteger('last_run_at').nullable();
    t.text('last_error').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['workflow_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('workflow_schedules');
}
