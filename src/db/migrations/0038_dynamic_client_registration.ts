import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Public clients and clients that register themselves (RFC 7591/7592, src/oauth/registration.ts).
// On `applications`:
// - `owner_user_id` becomes nullable: a client that registered itself has no owner.
// - `token_endpoint_auth_method`: `client_secret_basic` or `client_secret_post` (confidential: it
//   has client secrets) or `none` (a public client: it presents its client_id alone, and PKCE is
//   always required of it). Existing applications are confidential: client_secret_basic.
// - `registration_kind`: `console` (registered by a user in the console or by the operator's CLI),
//   `dynamic` (RFC 7591), `metadata_document` (a Client ID Metadata Document's URL as client_id).
// - `redirect_uris`: a JSON array of every registered redirect URI; null for an application with
//   the one `redirect_uri` (which stays the first of the list, '' for a client without any).
// - `client_metadata`: a JSON object of the other registered metadata (client_uri, logo_uri,
//   contacts, software_id, software_version, scope, grant_types), as the client sent it, checked.
// - `registration_access_token_hash`: SHA-256 of the token that manages a dynamic client (RFC 7592).
// - `last_used_at`: when a token was last issued to the client (ms; at most one write an hour).
// `client_registration_tokens`: the operator's initial access tokens (RFC 7591 3), stored as
// SHA-256 hashes, with an optional expiry; revoking one deletes its row.

const TABLE = 'applications';
export const CLIENT_REGISTRATION_TABLES = ['client_registration_tokens'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.integer('owner_user_id').unsigned().nullable().alter();
  });
  await knex.schema.alterTable(TABLE, (t) => {
    t.string('token_endpoint_auth_method', 32).notNullable().defaultTo('client_secret_basic');
    t.string('registration_kind', 32).notNullable().defaultTo('console');
    t.text('redirect_uris').nullable();
    t.text('client_metadata').nullable();
    t.string('registration_access_token_hash', 64).nullable().unique();
    t.bigInteger('last_used_at').nullable();
    t.index(['registration_kind'], 'applications_registration_kind');
  });
  await knex.schema.createTable('client_registration_tokens', (t) => {
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.string('token_hash', 64).notNullable().unique();
    t.string('label', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('client_registration_tokens');
  // Clients without an owner cannot be kept by the older schema.
  await knex(TABLE).whereNull('owner_user_id').delete();
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropIndex(['registration_kind'], 'applications_registration_kind');
    t.dropUnique(['registration_access_token_hash']);
    t.dropColumn('token_endpoint_auth_method');
    t.dropColumn('registration_kind');
    t.dropColumn('redirect_uris');
    t.dropColumn('client_metadata');
    t.dropColumn('registration_access_token_hash');
    t.dropColumn('last_used_at');
  });
  await knex.schema.alterTable(TABLE, (t) => {
    t.integer('owner_user_id').unsigned().notNullable().alter();
  });
}
