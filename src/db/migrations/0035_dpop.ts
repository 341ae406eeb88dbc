import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';

// DPoP (RFC 9449): sender-constrained access tokens.
// - `oauth_tokens.dpop_jkt`: the RFC 7638 thumbprint of the key the access token is bound to
//   (its `cnf.jkt`); null for a bearer token.
// - `dpop_proofs`: the proofs already used, so that a replayed proof (the same `jti` from the same
//   key) is refused by every process: `proof_key` is a hash of the key's thumbprint and the jti
//   (unique), kept until `expires_at`, past which its `iat` would be refused anyway; a sweep
//   deletes the rows past it (src/http/dpopProofs.store.ts).

export const DPOP_TABLES = ['dpop_proofs'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.string('dpop_jkt', 43).nullable();
  });
  await knex.schema.createTable('dpop_proofs', (t) => {
    // Exact comparisons on MySQL (see 0004_exact_collations); knex refuses these on PostgreSQL.
    if (dialectOf(knex) === 'mysql') {
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.string('proof_key', 64).primary();
    t.bigInteger('expires_at').notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('dpop_proofs');
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropColumn('dpop_jkt');
  });
}
