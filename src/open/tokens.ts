import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { principalOf, type PrincipalOf } from '../http/principal.ts';
import { accessTokenExpired, accessTokenNotInNamespace, invalidAccessToken } from '../shared/errors.ts';
import { principalLease } from '../shared/principalLease.ts';
import { isExpired, listAccessTokens as listAccessTokensOf } from '../accounts/accessTokens.ts';
import { canonicalName } from '../accounts/validate.ts';
import { signProxyToken } from './proxyTokens.ts';
import { keyRing, PROXY_TOKEN_ALG } from './signingKeys.ts';
import { findTokenForIssuance } from './store.ts';

type AccessTokenListItem = components['schemas']['AccessTokenListItem'];
type AccessTokenDetail = components['schemas']['AccessTokenDetail'];

/** GET /api/open/v1/{namespace}/tokens: exactly [{id, name, usage_scenario}]; a foreign namespace is 404. */
export function listAccessTokens(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'oauth');
    const tokens = await listAccessTokensOf(ctx, principal.userId, String(req.params.namespace));
    const body: AccessTokenListItem[] = tokens.map((t) => ({
      id: t.id,
      name: t.name,
      usage_scenario: t.usage_scenario,
    }));
    res.set('Cache-Control', 'no-store').json(body);
  };
}

/**
 * How an issuance says no: token detail answers with its problems (below); the token endpoint's
 * token exchange with RFC 8693's errors (src/oauth/grants/tokenExchange.ts).
 */
export interface IssuanceRefusals {
  /** The principal's grant does not stand (revoked since its check), or it has no authorization. */
  grantGone: () => Error;
  /** The raw token has expired. */
  expired: (id: number) => Error;
  /** No raw token `id` in `namespace` for this user (deleted, another user's, another namespace's). */
  notFound: (id: number, namespace: string) => Error;
}

const TOKEN_DETAIL_REFUSALS: IssuanceRefusals = {
  grantGone: invalidAccessToken,
  expired: accessTokenExpired,
  notFound: accessTokenNotInNamespace,
};

/**
 * Issues a proxy token for the user's raw access token `id` in `namespace`, for the app holding
 * `principal`'s authorization; `refuse` says how a refusal is answered.
 *
 * Revocation (with the principal lease): once a call that revokes the app's
 * authorization, deletes the raw token or takes its namespace from the user (leaving the org) has
 * returned, no proxy token is issued for it. The security handler checked the authorization, but
 * awaits happen after that check. So:
 * 1. the signing key is fetched first (it may need the database on first use or cache expiry);
 * 2. the last check is the raw token with its authorization (findTokenForIssuance: one statement
 *    that reads the token and re-reads the authorization row), served from the principal lease
 *    for at most PRINCIPAL_CACHE_MS from when its read began. Every path that changes its answer
 *    is one that already settles the lease for the proxy token's own principal (the same
 *    authorization, raw token and namespace, see findStandingGrant), so by the time it returns,
 *    every read that predates its commit has run out;
 * 3. signing is CPU only (on the thread pool), with no I/O and no await on anything shared.
 * A proxy token signed from a lease that began before the commit is refused by the gateway at its
 * first use: its principal is read fresh, after the commit.
 */
export async function issueProxyToken(
  ctx: AppContext,
  principal: PrincipalOf<'oauth'>,
  namespace: string,
  id: number,
  refuse: IssuanceRefusals = TOKEN_DETAIL_REFUSALS,
): Promise<AccessTokenDetail> {
  // A proxy token stands on an authorization (its `aid`): a grant stored without one has none to issue.
  const authorizationId = principal.authorizationId;
  if (authorizationId === null) throw refuse.grantGone();
  const signingKey = await keyRing(ctx).signingKey(PROXY_TOKEN_ALG);
  const token = await principalLease(ctx).principal(
    'issuance',
    issuanceLeaseKey(principal, namespace, id),
    async () => {
      const found = await findTokenForIssuance(ctx.db, {
        userId: principal.userId,
        namespace: canonicalName(namespace),
        id,
        authorizationId,
      });
      // Refusals are never cached (only shared with requests that arrive during this read): not
      // found is the lease's null, the others have answers of their own and are thrown.
      if (!found) return null;
      if (!found.authorizationStands) throw refuse.grantGone();
      if (isExpired({ expires_at: found.expiresAt })) throw refuse.expired(id);
      // The lease never runs past the raw token's own expiry.
      return { principal: found, expiresAt: found.expiresAt ?? undefined };
    },
  );
  if (!token) throw refuse.notFound(id, namespace);
  const proxy = await signProxyToken(ctx, signingKey, {
    userId: principal.userId,
    clientId: principal.clientId,
    authorizationId,
    chainId: principal.chainId,
    accessTokenId: token.id,
    namespace: token.namespace,
    usageScenario: token.usageScenario,
    // A proxy token minted from a DPoP-bound token is bound to the same key: a stolen one is of
    // no more use at the gateway than the stolen access token would be at the API.
    jkt: principal.dpopJkt,
  });
  ctx.logger.info(
    {
      proxy_token: {
        jti: proxy.claims.jti,
        access_token_id: token.id,
        client_id: principal.clientId,
        usage_scenario: token.usageScenario,
      },
    },
    'proxy token issued',
  );
  return {
    id: token.id,
    name: token.name,
    usage_scenario: token.usageScenario,
    proxy_access_token: proxy.token,
    expires_in: proxy.expiresIn,
  };
}

/**
 * The principal lease's key for issuing on raw token `id` in `namespace` (as the request spells
 * it, which the 404's message repeats) under `principal`'s authorization. It names ids only, no
 * secret: what the lease holds is the token's id, name, namespace, usage scenario and expiry.
 */
export function issuanceLeaseKey(principal: PrincipalOf<'oauth'>, namespace: string, id: number): string {
  return `${principal.userId}:${principal.authorizationId}:${id}:${namespace}`;
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
