import type { Knex } from 'knex';

// Resource indicators (RFC 8707): which protected resources a grant was authorized for, and which
// ones an access token may be used at. Each column holds resource identifiers (absolute URIs, which
// never contain a space) separated by one space; null means none was named, as for every grant
// before this migration, which keeps the old behaviour (a token usable at the open and workflows APIs).
// - `oauth_codes.resources`, `device_authorizations.resources`: the request's `resource` parameters.
// - `oauth_tokens.resources`: the grant's set, which a refresh token carries on to its successors.
// - `oauth_tokens.audience`: the access token's audience (a subset of the grant's set).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.text('resources').nullable();
  });
  await knex.schema.alterTable('device_authorizations', (t) => {
    t.text('resources').nullable();
  });
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.text('resources').nullable();
    t.text('audience').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropColumn('audience');
    t.dropColumn('resources');
  });
  await knex.schema.alterTable('device_authorizations', (t) => {
    t.dropColumn('resources');
  });
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.dropColumn('resources');
  });
}
