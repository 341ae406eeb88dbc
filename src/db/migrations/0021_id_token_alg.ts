import type { Knex } from 'knex';

// OpenID Connect ID tokens are RS256 unless the client registered id_token_signed_response_alg:
// ES256 (OIDC Dynamic Client Registration 1.0, 2: RS256 is the default). The
// application keeps its choice. Applications registered before this migration were issued ES256
// ID tokens, and a relying party may have pinned that: they keep ES256 (their owner may switch);
// the column's default, for every later registration, is RS256.

const TABLE = 'applications';
const COLUMN = 'id_token_signed_response_alg';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.string(COLUMN, 16).notNullable().defaultTo('ES256');
  });
  // The same statement on PostgreSQL, MySQL and MariaDB.
  await knex.raw(`ALTER TABLE ?? ALTER COLUMN ?? SET DEFAULT 'RS256'`, [TABLE, COLUMN]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropColumn(COLUMN);
  });
}
