import type { Knex } from 'knex';

// PKCE for every client (RFC 9700 2.1.1 recommends it for confidential clients too): the authorize
// endpoint refuses a request without code_challenge unless the operator opted this application out
// (`npm run admin -- app update --client-id ID --pkce optional`). Every application here is a
// confidential client (it authenticates with a client secret); a public client, should one ever be
// registered, is never exempt, whatever this column says. Applications registered before this
// migration are held to it too: the operator opts out those whose relying party cannot send PKCE.

const TABLE = 'applications';
const COLUMN = 'pkce_required';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.boolean(COLUMN).notNullable().defaultTo(true);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropColumn(COLUMN);
  });
}
