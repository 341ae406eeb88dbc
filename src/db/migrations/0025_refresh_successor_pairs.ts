import type { Knex } from 'knex';

// Within the refresh grace window every presentation of a rotated refresh token gets the same
// successor pair, whatever order abandoned and retried requests execute in (src/oauth/chain.store.ts).
// The successor's raw tokens are kept with its row for the window only, sealed with the
// key-encryption key and bound to the token it succeeds (src/shared/sealing.ts): the hashes stay
// what is looked up, and a database read alone yields no usable token. sealed_until says when the
// sealed pair may be cleared (indexed for that sweep); NULL once cleared, and for rows from before.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.text('sealed_pair').nullable();
    t.bigInteger('sealed_until').nullable().index('oauth_tokens_sealed_until_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropIndex(['sealed_until'], 'oauth_tokens_sealed_until_index');
    t.dropColumn('sealed_until');
    t.dropColumn('sealed_pair');
  });
}
