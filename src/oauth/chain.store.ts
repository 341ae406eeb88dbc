import type { Knex } from 'knex';
import { revokeTokensWithoutAuthorization } from './authorizations.store.ts';

// A refresh token's chain: the pairs one code led to (code_id), each refresh token replaced by one
// successor (rotated_from_id). The SQL of the grace window and of reuse, named by intent; the
// rotation itself is store.ts's insertSuccessorToken, which stores the successor with its raw pair
// sealed (sealed_pair, bound to the token it succeeds) until the window is over (sealed_until).
// Times are epoch milliseconds (BIGINT).

/** The context a successor's sealed pair is bound to: the token it succeeds (a sealed pair copied to another row does not open). */
export function sealedPairContext(rotatedFromId: number): string {
  return `oauth_tokens.sealed_pair:${rotatedFromId}`;
}

/** A refresh token's successor, as a grace replay reads it: its sealed raw pair, and whether it was itself rotated. */
export interface Successor {
  id: number;
  accessTokenHash: string;
  refreshTokenHash: string;
  scope: string;
  accessScope: string | null;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  revokedAt: number | null;
  /** When the successor was itself rotated (its own successor's rotation), or null while it is the live token. */
  rotatedAt: number | null;
  sealedPair: string | null;
  sealedUntil: number | null;
  /** The DPoP key its access token is bound to, if any: a replay answers it as token_type DPoP. */
  dpopJkt: string | null;
}

/**
 * The successor of refresh token `tokenId`: what every presentation of the token within the grace
 * window is answered with (the same pair each time, from its sealed copy), in one read.
 */
export async function successorOf(db: Knex, tokenId: number): Promise<Successor | null> {
  const row = (await db('oauth_tokens as s')
    .leftJoin('oauth_tokens as next', 'next.rotated_from_id', 's.id')
    .where('s.rotated_from_id', tokenId)
    .first(
      's.id',
      's.access_token_hash',
      's.refresh_token_hash',
      's.scope',
      's.access_scope',
      's.access_expires_at',
      's.refresh_expires_at',
      's.revoked_at',
      's.rotated_at',
      's.sealed_pair',
      's.sealed_until',
      's.dpop_jkt',
      'next.created_at as next_created_at',
    )) as Record<string, unknown> | undefined;
  if (!row) return null;
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: Number(row.id),
    accessTokenHash: String(row.access_token_hash),
    refreshTokenHash: String(row.refresh_token_hash),
    scope: String(row.scope),
    accessScope: row.access_scope === null ? null : String(row.access_scope),
    accessExpiresAt: Number(row.access_expires_at),
    refreshExpiresAt: Number(row.refresh_expires_at),
    revokedAt: n(row.revoked_at),
    rotatedAt: n(row.rotated_at) ?? n(row.next_created_at),
    sealedPair: row.sealed_pair === null ? null : String(row.sealed_pair),
    sealedUntil: n(row.sealed_until),
    dpopJkt: row.dpop_jkt === null || row.dpop_jkt === undefined ? null : String(row.dpop_jkt),
  };
}

/** Clears the sealed pairs kept past their window (at most one sweep per process a window: sweepSealedPairs). */
export async function clearSealedPairs(db: Knex, now: number): Promise<number> {
  return db('oauth_tokens').where('sealed_until', '<', now).update({ sealed_pair: null, sealed_until: null });
}

/**
 * Records when a rotation was seen committed, for one whose statement was slow (a lock, a stalled
 * store): the grace window runs from then, not from the time the pair was made before the wait.
 */
export async function recordRotationTime(
  db: Knex,
  tokenId: number,
  committedAt: number,
  sealedUntil: number,
): Promise<void> {
  await db('oauth_tokens').where({ id: tokenId }).update({ rotated_at: committedAt });
  await db('oauth_tokens')
    .where({ rotated_from_id: tokenId })
    .whereNotNull('sealed_until')
    .update({ sealed_until: sealedUntil });
}

/**
 * What one chain is: the pairs one code led to under its authorization (`codeId` null: a token from
 * before code_id was kept, whose chain is its whole authorization), or, for a grant stored without
 * an authorization (migration 0026), which has no code, the user's pairs of that client.
 */
export type Chain =
  { authorizationId: number; codeId: number | null } | { authorizationId: null; userId: number; applicationId: number };

/**
 * Revokes one chain: every pair descending from code `codeId` under the authorization, and the code
 * marked so that readers refuse whatever else stands on it (a pair stored by a concurrent request,
 * proxy tokens minted through the chain). Another installation of the app, from another code under
 * the same remembered consent, stands. A token from before code_id was kept (NULL) has no chain of
 * its own: its whole authorization goes. A grant without an authorization has no code: every pair
 * of the user and client goes (authorizations.store.ts revokeTokensWithoutAuthorization).
 */
export async function revokeChain(db: Knex, chain: Chain, now: number): Promise<void> {
  if (chain.authorizationId === null) {
    await revokeTokensWithoutAuthorization(db, chain.userId, chain.applicationId, now);
    return;
  }
  const { authorizationId, codeId } = chain;
  if (codeId === null) {
    await db('authorizations').where({ id: authorizationId }).whereNull('revoked_at').update({ revoked_at: now });
    await db('oauth_tokens')
      .where({ authorization_id: authorizationId })
      .whereNull('revoked_at')
      .update({ revoked_at: now, sealed_pair: null, sealed_until: null });
    return;
  }
  await db('oauth_codes').where({ id: codeId }).whereNull('chain_revoked_at').update({ chain_revoked_at: now });
  await db('oauth_tokens')
    .where({ authorization_id: authorizationId, code_id: codeId })
    .whereNull('revoked_at')
    .update({ revoked_at: now, sealed_pair: null, sealed_until: null });
}
