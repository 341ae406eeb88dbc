import type { Knex } from 'knex';

// OpenID Connect sign-in: the ID token of a code's exchange carries the authorization
// request's `nonce` and the time the user logged in (`auth_time`, OIDC Core 2), both known only at
// /oauth/authorize, so the code keeps them. Refreshes read auth_time through the code (code_id).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.string('nonce', 255).nullable();
    t.bigInteger('auth_time').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.dropColumn('nonce');
    t.dropColumn('auth_time');
  });
}
