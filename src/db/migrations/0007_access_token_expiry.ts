import type { Knex } from 'knex';

// An optional expiry of a raw access token (API key), chosen when it is created (as GitHub's
// personal access tokens): NULL never expires, as every existing token. Checked wherever the token
// is used: the API key itself, and proxy tokens minted from it.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('access_tokens', (t) => {
    t.bigInteger('expires_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('access_tokens', (t) => {
    t.dropColumn('expires_at');
  });
}
