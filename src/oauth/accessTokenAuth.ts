import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { hashToken } from '../shared/crypto.ts';
import { splitScope } from './scopes.ts';
import { findTokenWithUserByAccessHash } from './store.ts';

/**
 * The principal of an OAuth access token (RFC 6750): found by hash, not expired, not revoked, and
 * its authorization still standing, so revoking an app takes effect on the next request.
 */
export async function authenticateOAuthAccessToken(ctx: AppContext, token: string): Promise<PrincipalOf<'oauth'> | null> {
  if (!token.startsWith('gho_')) return null;
  const row = await findTokenWithUserByAccessHash(ctx.db, hashToken(token));
  if (!row || row.revokedAt !== null || row.authorizationRevokedAt !== null) return null;
  if (row.accessExpiresAt <= Date.now()) return null;
  return {
    kind: 'oauth',
    userId: row.userId,
    applicationId: row.applicationId,
    clientId: row.clientId,
    authorizationId: row.authorizationId,
    scopes: splitScope(row.scope),
    user: { id: row.userId, login: row.user.login, name: row.user.name, avatar_url: row.user.avatarUrl },
  };
}
