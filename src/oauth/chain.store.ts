import type { Knex } from 'knex';
import type { NewToken } from './store.ts';

// A refresh token's chain: the pairs one code led to (code_id), each refresh token replaced by one
// successor (rotated_from_id). The SQL of the grace window and of reuse, named by intent; the
// rotation itself is store.ts's insertSuccessorToken. Times are epoch milliseconds (BIGINT).

/** What a grace replay found: the successor replaced, the token an older generation, or nothing to replace. */
export type Replay = 'replaced' | 'older generation' | 'gone';

/**
 * A rotated refresh token presented again within the grace window (a retry whose answer was lost):
 * its successor, while still unused, is revoked (with its access token) and the new pair takes its
 * place as the token's one successor, so the grant never has two live refresh tokens. When the
 * successor was itself rotated, the token is an older generation: reuse. One transaction, locking
 * the token (replays of one token go one at a time) and then its successor, whose rotation takes a
 * share lock on it (store.ts): a concurrent rotation of the successor commits first and is seen
 * here, or waits and then finds it revoked. `rotatedAt` is kept as the token's rotation time, so a
 * replay does not move the window.
 */
export async function replaceSuccessor(db: Knex, tokenId: number, rotatedAt: number, pair: NewToken, now: number): Promise<Replay> {
  return db.transaction(async (trx) => {
    const token = await trx('oauth_tokens').where({ id: tokenId }).forUpdate().first('id', 'revoked_at');
    if (!token || token.revoked_at !== null) return 'gone';
    const successor = await trx('oauth_tokens').where({ rotated_from_id: tokenId }).forUpdate().first('id', 'revoked_at');
    if (!successor || successor.revoked_at !== null) return 'gone';
    const next = await trx('oauth_tokens').where({ rotated_from_id: successor.id }).forUpdate().first('id');
    if (next) return 'older generation';
    await trx('oauth_tokens').where({ id: successor.id }).update({ revoked_at: now, rotated_from_id: null });
    await trx('oauth_tokens').where({ id: tokenId }).update({ rotated_at: rotatedAt });
    await trx('oauth_tokens').insert({
      authorization_id: pair.authorizationId,
      code_id: pair.codeId,
      access_token_hash: pair.accessTokenHash,
      refresh_token_hash: pair.refreshTokenHash,
      scope: pair.scope,
      access_scope: pair.accessScope ?? null,
      access_expires_at: pair.accessExpiresAt,
      refresh_expires_at: pair.refreshExpiresAt,
      created_at: pair.createdAt,
      rotated_from_id: tokenId,
    });
    return 'replaced';
  });
}

/**
 * Records when a rotation was seen committed, for one whose statement was slow (a lock, a stalled
 * store): the grace window runs from then, not from the time the pair was made before the wait.
 */
export async function recordRotationTime(db: Knex, tokenId: number, committedAt: number): Promise<void> {
  await db('oauth_tokens').where({ id: tokenId }).update({ rotated_at: committedAt });
}

/**
 * Revokes one chain: every pair descending from code `codeId` under the authorization, and the code
 * marked so that readers refuse whatever else stands on it (a pair stored by a concurrent request,
 * proxy tokens minted through the chain). Another installation of the app, from another code under
 * the same remembered consent, stands. A token from before code_id was kept (NULL) has no chain of
 * its own: its whole authorization goes.
 */
export async function revokeChain(db: Knex, authorizationId: number, codeId: number | null, now: number): Promise<void> {
  if (codeId === null) {
    await db('authorizations').where({ id: authorizationId }).whereNull('revoked_at').update({ revoked_at: now });
    await db('oauth_tokens').where({ authorization_id: authorizationId }).whereNull('revoked_at').update({ revoked_at: now });
    return;
  }
  await db('oauth_codes').where({ id: codeId }).whereNull('chain_revoked_at').update({ chain_revoked_at: now });
  await db('oauth_tokens').where({ authorization_id: authorizationId, code_id: codeId }).whereNull('revoked_at').update({ revoked_at: now });
}
