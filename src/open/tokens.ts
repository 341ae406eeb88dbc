import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { principalOf, type PrincipalOf } from '../http/principal.ts';
import { accessTokenExpired, accessTokenNotInNamespace, invalidAccessToken } from '../shared/errors.ts';
import { isExpired, listAccessTokens as listAccessTokensOf } from '../platform/accessTokens.ts';
import { canonicalName } from '../platform/validate.ts';
import { signProxyToken } from './proxyTokens.ts';
import { keyRing } from './signingKeys.ts';
import { findTokenForIssuance } from './store.ts';

type AccessTokenListItem = components['schemas']['AccessTokenListItem'];
type AccessTokenDetail = components['schemas']['AccessTokenDetail'];

/** GET /api/open/v1/{namespace}/tokens: exactly [{id, name, usage_scenario}]; a foreign namespace is 404. */
export function listAccessTokens(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'oauth');
    const tokens = await listAccessTokensOf(ctx, principal.userId, String(req.params.namespace));
    const body: AccessTokenListItem[] = tokens.map((t) => ({ id: t.id, name: t.name, usage_scenario: t.usage_scenario }));
    res.set('Cache-Control', 'no-store').json(body);
  };
}

/**
 * Issues a proxy token for the user's raw access token `id` in `namespace`, for the app holding
 * `principal`'s authorization.
 *
 * Revocation race (issue 10): no proxy token may be issued after the user's revocation commits.
 * The security handler checked the authorization, but awaits happen after that check. So:
 * 1. the signing key is fetched first (it may need the database on first use or cache expiry);
 * 2. the last database read is one statement that loads the raw token and re-reads the
 *    authorization row (findTokenForIssuance);
 * 3. signing is CPU only (on the thread pool), with no I/O and no await on anything shared.
 * If the revocation committed before that statement, the statement sees it and we refuse (401).
 * If it commits after, the issuance precedes it; and the gateway re-checks the authorization on
 * every call, so such a token is refused at its first use after the revocation.
 */
export async function issueProxyToken(
  ctx: AppContext,
  principal: PrincipalOf<'oauth'>,
  namespace: string,
  id: number,
): Promise<AccessTokenDetail> {
  const signingKey = await keyRing(ctx).signingKey();
  const token = await findTokenForIssuance(ctx.db, {
    userId: principal.userId,
    namespace: canonicalName(namespace),
    id,
    authorizationId: principal.authorizationId,
  });
  if (!token) throw accessTokenNotInNamespace(id, namespace);
  if (!token.authorizationStands) throw invalidAccessToken();
  if (isExpired({ expires_at: token.expiresAt })) throw accessTokenExpired(id);
  const proxy = await signProxyToken(ctx, signingKey, {
    userId: principal.userId,
    clientId: principal.clientId,
    authorizationId: principal.authorizationId,
    accessTokenId: token.id,
    namespace: token.namespace,
    usageScenario: token.usageScenario,
  });
  ctx.logger.info(
    { proxy_token: { jti: proxy.claims.jti, access_token_id: token.id, client_id: principal.clientId, usage_scenario: token.usageScenario } },
    'proxy token issued',
  );
  return { id: token.id, name: token.name, usage_scenario: token.usageScenario, proxy_access_token: proxy.token, expires_in: proxy.expiresIn };
}

/** GET /api/open/v1/{namespace}/tokens/{id}: token detail with a fresh proxy token, never the raw token. */
export function getAccessToken(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'oauth');
    const id = Number(req.params.id);
    const body = await issueProxyToken(ctx, principal, String(req.params.namespace), id);
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(body);
  };
}
