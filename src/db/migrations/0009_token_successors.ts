import type { Knex } from 'knex';

// A refresh token's rotation is the insert of its successor: the new pair names the token it
// replaces in rotated_from_id, which is unique, so of two concurrent refreshes with one token only
// one can rotate it (the other's insert violates the key). The grant makes one statement where it
// made two (an insert and a conditional update of rotated_at; docs/benchmarks-history.md).
// rotated_at stays: tokens rotated before this migration carry their rotation there.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.integer('rotated_from_id').unsigned().nullable().unique();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropUnique(['rotated_from_id']);
    t.dropColumn('rotated_from_id');
  });
}
