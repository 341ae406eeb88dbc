import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { isExpired, markAccessTokenUsed } from '../accounts/accessTokens.ts';
import { principalLease } from '../shared/principalLease.ts';
import { verifyProxyToken } from './proxyTokens.ts';
import { findStandingGrant } from './store.ts';

/** Recording every use would be a write per request; a minute's precision is enough (as for API keys). */
const LAST_USED_PRECISION_MS = 60_000;

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/**
 * The principal of a proxy token: signature, `typ`, `iss`, `aud` and `exp` verified against the
 * published keys (no database trip once the keys are cached), then one indexed query that the
 * authorization behind it is not revoked and its raw access token still exists. The principal is
 * served from the principal lease for at most PRINCIPAL_CACHE_MS; revoking the app or deleting the
 * raw token waits that long, so when it answers no API process honours the token.
 */
export async function authenticateProxyToken(ctx: AppContext, token: string): Promise<PrincipalOf<'proxy'> | null> {
  return principalLease(ctx).principal('proxy', token, () => readProxyPrincipal(ctx, token));
}

async function readProxyPrincipal(
  ctx: AppContext,
  token: string,
): Promise<{ principal: PrincipalOf<'proxy'>; expiresAt: number } | null> {
  const claims = await verifyProxyToken(ctx, token);
  if (!claims) return null;
  const grant = await findStandingGrant(ctx.db, claims);
  const now = Date.now();
  // The raw token it was minted from expired: its proxy tokens stop with it.
  if (!grant || isExpired({ expires_at: grant.expiresAt }, now)) return null;
  if (grant.lastUsedAt === null || now - grant.lastUsedAt > LAST_USED_PRECISION_MS) {
    // Usage is attributed to the raw token; bookkeeping only, a failed write must not refuse the call.
    markAccessTokenUsed(ctx, claims.accessTokenId, now).catch((err: unknown) =>
      ctx.logger.warn({ err }, 'could not record access token use'),
    );
  }
  const principal: PrincipalOf<'proxy'> = {
    kind: 'proxy',
    userId: claims.userId,
    accessTokenId: claims.accessTokenId,
    authorizationId: claims.authorizationId,
    clientId: claims.clientId,
    namespace: grant.namespace,
    usageScenario: grant.usageScenario,
    jti: claims.jti,
    ...(claims.jkt === undefined ? {} : { dpopJkt: claims.jkt }),
  };
  return {
    principal,
    expiresAt: grant.expiresAt === null ? claims.exp * 1000 : Math.min(claims.exp * 1000, grant.expiresAt),
  };
}
