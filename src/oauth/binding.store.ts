import type { Knex } from 'knex';

/**
 * Binds a new pair to what it is bound to besides its hashes: the DPoP key of its access token (an
 * RFC 7638 thumbprint, RFC 9449 5), the grant's resources that its refresh token carries on and its
 * access token's audience (RFC 8707, space separated). Set right after the pair is stored and before
 * it is answered, so the token is never usable unbound. Nothing to write for a bearer token of a
 * grant that named no resource, which stays one insert.
 */
export async function bindAccessToken(
  db: Knex,
  accessHash: string,
  dpopJkt: string | null,
  resources: string | null,
  audience: string | null,
): Promise<void> {
  const columns = { dpop_jkt: dpopJkt, resources, audience };
  const update = Object.fromEntries(Object.entries(columns).filter(([, value]) => value !== null));
  if (Object.keys(update).length === 0) return;
  await db('oauth_tokens').where('access_token_hash', accessHash).update(update);
}
