import OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { hashToken } from '../shared/crypto.ts';
import { principalLease } from '../shared/principalLease.ts';
import { splitScope } from './scopes.ts';
import { findTokenWithUserByAccessHash } from './store.ts';

/**
 * The principal of an OAuth access token (RFC 6750), checked by @node-oauth/oauth2-server's
 * OAuth2Server#authenticate (the token's syntax and expiry) over a model whose getAccessToken is
 * served from the principal lease for at most PRINCIPAL_CACHE_MS: found by hash, not expired, not
 * revoked, and its authorization still standing. Revoking an app waits that long, so it has taken
 * effect everywhere when it answers. The scope check and the RFC 6750 challenges stay in
 * src/http/security.ts, which serves every kind of bearer alike.
 */
export async function authenticateOAuthAccessToken(ctx: AppContext, token: string): Promise<PrincipalOf<'oauth'> | null> {
  if (!token.startsWith('gho_')) return null;
  const request = new OAuth2Server.Request({ method: 'GET', query: {}, headers: { authorization: `Bearer ${token}` } });
  const model = { getAccessToken: (accessToken: string) => leasedAccessToken(ctx, accessToken) } as unknown as OAuth2Server.ServerOptions['model'];
  try {
    const found = await new OAuth2Server({ model }).authenticate(request, new OAuth2Server.Response(), AUTHENTICATE);
    return (found as AccessToken).principal;
  } catch (err) {
    if (err instanceof OAuth2Server.InvalidTokenError || err instanceof OAuth2Server.InvalidRequestError) return null;
    // A store failure comes back wrapped in the library's server_error.
    throw (err instanceof OAuth2Server.ServerError && (err as { inner?: unknown }).inner) || err;
  }
}

const AUTHENTICATE: OAuth2Server.AuthenticateOptions = { addAcceptedScopesHeader: false, addAuthorizedScopesHeader: false, allowBearerTokensInQueryString: false };

type AccessToken = OAuth2Server.Token & { principal: PrincipalOf<'oauth'> };

async function leasedAccessToken(ctx: AppContext, accessToken: string): Promise<AccessToken | null> {
  const leased = await principalLease(ctx).principal('oauth', accessToken, () => readOAuthPrincipal(ctx, accessToken));
  if (!leased) return null;
  const { principal, expiresAt } = leased;
  return { accessToken, accessTokenExpiresAt: new Date(expiresAt), scope: principal.scopes, client: { id: principal.clientId, grants: [] }, user: { id: principal.userId }, principal };
}

/** What the lease keeps: the principal, and when the token expires (the library checks it on every call). */
async function readOAuthPrincipal(ctx: AppContext, token: string): Promise<{ principal: { principal: PrincipalOf<'oauth'>; expiresAt: number }; expiresAt: number } | null> {
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
  };
  return { principal: { principal, expiresAt: row.accessExpiresAt }, expiresAt: row.accessExpiresAt };
}
