import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { hashToken } from '../shared/crypto.ts';
import { principalLease } from '../shared/principalLease.ts';
import { splitScope } from './scopes.ts';
import { splitResources } from './resources.ts';
import { findTokenWithUserByAccessHash } from './store.ts';

/**
 * The principal of an OAuth access token (RFC 6750): found by hash, not expired, not revoked, and
 * its authorization and chain still standing; served from the principal lease for at most
 * PRINCIPAL_CACHE_MS (never past the token's expiry). Revoking an app waits that long, so it has
 * taken effect everywhere when it answers. The scope check and the RFC 6750 challenges stay in
 * src/http/security.ts, which serves every kind of bearer alike.
 *
 * Not through OAuth2Server#authenticate, since a library layer may be replaced when it costs more than 10% of a
 * benchmark row: on user info (bench row 3, alternated runs) it took the row from 1.90x to 1.58x
 * the in-memory peer (17%); what it checked (the token's presence and expiry) the lease's read
 * checks already. The token endpoint and code issuance run on the library (token.ts, decision.ts).
 */
export async function authenticateOAuthAccessToken(
  ctx: AppContext,
  token: string,
): Promise<PrincipalOf<'oauth'> | null> {
  if (!token.startsWith('gho_')) return null;
  return principalLease(ctx).principal('oauth', token, () => readOAuthPrincipal(ctx, token));
}

/** What the lease keeps: the principal, and when the token expires (the lease never outlives it). */
async function readOAuthPrincipal(
  ctx: AppContext,
  token: string,
): Promise<{ principal: PrincipalOf<'oauth'>; expiresAt: number } | null> {
  const row = await findTokenWithUserByAccessHash(ctx.db, hashToken(token));
  if (!row || row.revokedAt !== null || row.authorizationRevokedAt !== null) return null;
  if (row.accessExpiresAt <= Date.now()) return null;
  const principal: PrincipalOf<'oauth'> = {
    kind: 'oauth',
    userId: row.userId,
    applicationId: row.applicationId,
    clientId: row.clientId,
    authorizationId: row.authorizationId,
    ...(row.codeId === null ? {} : { chainId: row.codeId }),
    scopes: splitScope(row.accessScope),
    user: { id: row.userId, login: row.user.login, name: row.user.name, avatar_url: row.user.avatarUrl },
    ...(row.dpopJkt === null ? {} : { dpopJkt: row.dpopJkt }),
    // Leased with the rest of the principal: a token's audience never changes once issued.
    ...(row.audience === null ? {} : { audience: splitResources(row.audience) }),
  };
  return { principal, expiresAt: row.accessExpiresAt };
}
