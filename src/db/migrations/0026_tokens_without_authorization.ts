import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// A grant that does not descend from a code (device flow, token exchange: src/oauth/grants/registry.ts)
// stores its tokens without an authorization row: authorization_id (and code_id, already) may be
// NULL, and such a token names its user and client itself (user_id, application_id), which
// a token under an authorization leaves NULL (its authorization names them). Indexed for the
// revocation of a user's grant to an application (src/oauth/authorizations.store.ts).

export async function up(knex: Knex): Promise<void> {
  await authorizationIdNullable(knex, true);
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.integer('user_id').unsigned().nullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('application_id').unsigned().nullable().references('id').inTable('applications').onDelete('CASCADE');
    t.index(['application_id', 'user_id'], 'oauth_tokens_application_user_index');
  });
}

/** Tokens stored without an authorization cannot go back under the constraint: they are dropped. */
export async function down(knex: Knex): Promise<void> {
  await knex('oauth_tokens').whereNull('authorization_id').delete();
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropForeign(['user_id']);
    t.dropForeign(['application_id']);
    t.dropIndex(['application_id', 'user_id'], 'oauth_tokens_application_user_index');
    t.dropColumn('application_id');
    t.dropColumn('user_id');
  });
  await authorizationIdNullable(knex, false);
}

/** MySQL keeps the foreign key's exact type (knex's setNullable would drop UNSIGNED, which MySQL refuses). */
async function authorizationIdNullable(knex: Knex, nullable: boolean): Promise<void> {
  if (dialectOf(knex) === 'mysql') {
    await knex.raw(`alter table oauth_tokens modify authorization_id int unsigned ${nullable ? 'null' : 'not null'}`);
  } else {
    await knex.schema.alterTable('oauth_tokens', (t) => (nullable ? t.setNullable('authorization_id') : t.dropNullable('authorization_id')));
  }
}
