import type { Knex } from 'knex';

// A run step's attempts: how many times the node called its model provider (1 plus its retries;
// RunStep.attempts in openapi.yaml). NULL for a node that calls none, and for steps logged before.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.integer('attempts').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('attempts');
  });
}
