import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { hashToken } from '../shared/crypto.ts';
import { principalLease } from '../shared/principalLease.ts';
import { splitScope } from './scopes.ts';
import { findTokenWithUserByAccessHash } from './store.ts';

/**
 * The principal of an OAuth access token (RFC 6750): found by hash, not expired, not revoked, and
 * its authorization still standing. Served from the principal lease for at most PRINCIPAL_CACHE_MS;
 * revoking an app waits that long, so it has taken effect everywhere when it answers.
 */
export async function authenticateOAuthAccessToken(ctx: AppContext, token: string): Promise<PrincipalOf<'oauth'> | null> {
  if (!token.startsWith('gho_')) return null;
  return principalLease(ctx).principal('oauth', token, () => readOAuthPrincipal(ctx, token));
}

async function readOAuthPrincipal(ctx: AppContext, token: string): Promise<{ principal: PrincipalOf<'oauth'>; expiresAt: number } | null> {
  const row = await findTokenWithUserByAccessHash(ctx.db, hashToken(token));
  if (!row || row.revokedAt !== null || row.authorizationRevokedAt !== null) return null;
  if (row.accessExpiresAt <= Date.now()) return null;
  const principal: PrincipalOf<'oauth'> = {
    kind: 'oauth',
    userId: row.userId,
    applicationId: row.applicationId,
    clientId: row.clientId,
    authorizationId: row.authorizationId,
    scopes: splitScope(row.scope),
    user: { id: row.userId, login: row.user.login, name: row.user.name, avatar_url: row.user.avatarUrl },
  };
  return { principal, expiresAt: row.accessExpiresAt };
}
