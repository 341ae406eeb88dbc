import type { Knex } from 'knex';

// Reuse of a refresh token (or a replayed code) revokes the chain it belongs to: the pairs one code
// led to, not every installation of the app that shares the user's remembered consent.
// The code row stands for its chain; chain_revoked_at marks it revoked, so that a pair stored after
// the revocation (a concurrent exchange or rotation) and the proxy tokens minted through the chain
// (their `cid` claim) are refused as well.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.bigInteger('chain_revoked_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.dropColumn('chain_revoked_at');
  });
}
