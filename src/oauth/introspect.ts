import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { hashToken } from '../shared/crypto.ts';
import { findUserById } from '../accounts/users.ts';
import { authenticatedClient, type OAuthClient } from './clients.ts';
import { lookupOrder } from './revocationHint.ts';
import { splitResources } from './resources.ts';
import { findTokenByAccessHash, findTokenByRefreshHash, type TokenRow } from './store.ts';
import { joinScopes, splitScope } from './scopes.ts';

type Introspection = components['schemas']['IntrospectionResponse'];

/** RFC 7662 2.2: everything that is not a live token of the asking client gets this, and nothing more. */
const INACTIVE: Introspection = { active: false };

/** Longer than any token this server issues (a `gho_`/`ghr_` token is about 50 characters): not one of ours. */
const MAX_TOKEN_LENGTH = 512;

/**
 * POST /api/open/oauth/introspect (RFC 7662), client-authenticated as the token endpoint is. Only
 * a token issued to the asking client is described (node-oidc-provider answers a token of another
 * client `active: false` as well), so a resource server learns nothing about other clients' tokens.
 * The token is read from the store on every request, never from the principal lease, so a token
 * whose revocation has answered is never active here.
 */
export function introspectToken(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const client = await authenticatedClient(ctx, req, { confidentialOnly: true });
    const { token, token_type_hint: hint } = req.body as { token: string; token_type_hint?: string };
    const body = await introspection(ctx, client, token, hint);
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).status(200).json(body);
  };
}

/**
 * What the token is, looked up as the hinted type first and then as the other (RFC 7662 2.1: the
 * hint only saves a lookup). A value that is found as neither, or is not a token of ours, is inactive.
 */
async function introspection(
  ctx: AppContext,
  client: OAuthClient,
  token: string,
  hint: string | undefined,
): Promise<Introspection> {
  if (token.length > MAX_TOKEN_LENGTH || !/^gh[or]_[\x21-\x7E]+$/.test(token)) return INACTIVE;
  const hash = hashToken(token);
  const now = Date.now();
  for (const type of lookupOrder(hint)) {
    const row =
      type === 'access_token' ? await findTokenByAccessHash(ctx.db, hash) : await findTokenByRefreshHash(ctx.db, hash);
    if (!row) continue;
    if (row.applicationId !== client.id) return INACTIVE;
    if (row.revokedAt !== null || row.authorizationRevokedAt !== null) return INACTIVE;
    if (type === 'access_token') {
      // As the API's bearer check has it (accessTokenAuth.ts): unexpired, its grant standing.
      if (row.accessExpiresAt <= now) return INACTIVE;
      // RFC 9449 6.2: a bound token says so, and names its key, so a resource server asks for a proof.
      const bound = row.dpopJkt === null ? {} : { token_type: 'DPoP', cnf: { jkt: row.dpopJkt } };
      // RFC 7662 2.2 `aud`, a string in the contract: the resource a token is for, when it is one (RFC 8707).
      const audience = splitResources(row.audience);
      const aud = audience.length === 1 ? { aud: audience[0]! } : {};
      return described(ctx, row, {
        scope: row.accessScope,
        exp: row.accessExpiresAt,
        token_type: 'Bearer',
        ...bound,
        ...aud,
      });
    }
    // A refresh token is live until it expires or is rotated: a rotated one only ever gets its
    // successor's pair back within the grace window (grants/refreshToken.ts), and is no credential.
    const refresh = row as TokenRow & { rotatedAt: number | null };
    if (refresh.rotatedAt !== null || refresh.refreshExpiresAt <= now) return INACTIVE;
    return described(ctx, row, { scope: row.scope, exp: row.refreshExpiresAt });
  }
  return INACTIVE;
}

/**
 * RFC 7662 2.2's members for a live token; `token_type` for access tokens only, and `cnf` for a
 * DPoP-bound one (RFC 9449 6.2), as node-oidc-provider. Refresh tokens are never bound here.
 */
async function described(
  ctx: AppContext,
  row: TokenRow,
  token: { scope: string; exp: number; token_type?: string; cnf?: { jkt: string }; aud?: string },
): Promise<Introspection> {
  const user = await findUserById(ctx, row.userId);
  if (!user) return INACTIVE;
  return {
    active: true,
    scope: joinScopes(splitScope(token.scope)),
    client_id: row.clientId,
    username: user.login,
    ...(token.token_type === undefined ? {} : { token_type: token.token_type }),
    exp: Math.floor(token.exp / 1000),
    iat: Math.floor(row.createdAt / 1000),
    sub: String(row.userId),
    ...(token.aud === undefined ? {} : { aud: token.aud }),
    iss: ctx.config.BASE_URL,
    ...(token.cnf === undefined ? {} : { cnf: token.cnf }),
  };
}
