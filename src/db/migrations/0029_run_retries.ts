import type { Knex } from 'knex';

// A run started by retrying a failed or cancelled one (src/runs/retry.ts): `runs.retry_of` names
// that run, and the steps copied from it (their outputs reused, no node run again) name it in
// `run_steps.reused_from`. Both null for every other run and step.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.string('retry_of', 64).nullable();
  });
  await knex.schema.alterTable('run_steps', (t) => {
    t.string('reused_from', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('reused_from');
  });
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('retry_of');
  });
}
