import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// An approval node a run waits at (src/runs/approvals.ts): one row per node reached, the answer
// once given. `token_hash` is the SHA-256 of the single-use link's random token (the token itself
// is never stored here); `state` goes waiting -> answered | timed_out exactly once, by a
// conditional update, so of two answers sent at once one wins. The sweep finds the rows past
// `expires_at` by the (state, expires_at) index.

const TABLE = 'run_approvals';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable(TABLE, (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.string('run_id', 40).notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.string('node_id', 191).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.string('state', 16).notNullable();
    t.text('message', 'longtext').notNullable();
    t.text('answer_schema').notNullable();
    t.text('answer', 'longtext').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('answered_at').nullable();
    t.unique(['run_id', 'node_id']);
    t.index(['state', 'expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable(TABLE);
}
