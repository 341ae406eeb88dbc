import type { Knex } from 'knex';

// RFC 6749 6: a refresh may narrow the scope of the new access token, but the grant keeps the scope
// it was given (a later refresh without `scope` gets it whole). `scope` stays the refresh token's
// (the grant's); access_scope holds the access token's when a refresh narrowed it (NULL: the same).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.string('access_scope', 255).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropColumn('access_scope');
  });
}
