import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// Pushed authorization requests (RFC 9126): a client posts its authorization request's parameters
// to the PAR endpoint and sends the browser to /oauth/authorize with only client_id and the
// request_uri it got back.
// - `oauth_pushed_requests`: one row per pushed request. `request_hash` is the SHA-256 hex of the
//   request_uri's random part: the request_uri itself is never stored, so the table cannot be read
//   back into usable request_uris. `params` is the request's parameters as JSON (validated when
//   pushed, validated again when used). `used_at` is set when a code is issued from it or the user
//   denied it (single use); `expires_at` bounds its first use (PAR_REQUEST_URI_TTL_SECONDS), and
//   `opened_at` is when a browser first brought it to /oauth/authorize: from then on the user has
//   a while longer to log in and decide (the login page comes back to the same URL).
// - `applications.require_pushed_authorization_requests`: the client may start an authorization
//   only through a pushed request (RFC 9126 6); false for every existing application.

export const PUSHED_REQUEST_TABLES = ['oauth_pushed_requests'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_pushed_requests', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.increments('id');
    t.string('request_hash', 64).notNullable().unique();
    t.integer('application_id').unsigned().notNullable().references('id').inTable('applications').onDelete('CASCADE');
    t.text('params').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('opened_at').nullable();
    t.bigInteger('used_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['application_id', 'expires_at']);
  });
  await knex.schema.alterTable('applications', (t) => {
    t.boolean('require_pushed_authorization_requests').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('applications', (t) => {
    t.dropColumn('require_pushed_authorization_requests');
  });
  await knex.schema.dropTableIfExists('oauth_pushed_requests');
}
