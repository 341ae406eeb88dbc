import type { AppContext } from '../../context.ts';
import { hashToken, newToken } from '../../shared/crypto.ts';
import { joinScopes } from '../scopes.ts';
import * as store from '../store.ts';

/** The successful token response (RFC 6749 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** What a new pair is issued under: the grant, the code it descends from, its scope. */
export interface Grant {
  authorizationId: number;
  codeId: number | null;
  scope: readonly string[];
}

/**
 * Issues a new access and refresh token pair under the grant `authorizationId` (RFC 6749 5.1).
 * Both are stored as hashes only; `codeId` ties the pair to the code it descends from, so that a
 * replayed code revokes every pair it led to (RFC 9700 4.2.4).
 */
export async function issueTokens(ctx: AppContext, grant: Grant): Promise<TokenResponse> {
  const pair = newPair(ctx, grant);
  await store.insertToken(ctx.db, pair.row);
  return pair.response;
}

/**
 * Issues the pair that replaces refresh token `rotatedFromId` (its rotation, RFC 9700 4.14.2); null
 * when the token was rotated by a concurrent refresh first, or its grant revoked meanwhile.
 */
export async function issueRotatedTokens(ctx: AppContext, grant: Grant, rotatedFromId: number): Promise<TokenResponse | null> {
  const pair = newPair(ctx, grant);
  return (await store.insertSuccessorToken(ctx.db, pair.row, rotatedFromId)) ? pair.response : null;
}

function newPair(ctx: AppContext, grant: Grant): { row: store.NewToken; response: TokenResponse } {
  const accessToken = newToken('gho');
  const refreshToken = newToken('ghr');
  const scope = joinScopes(grant.scope);
  const now = Date.now();
  return {
    row: {
      authorizationId: grant.authorizationId,
      codeId: grant.codeId,
      accessTokenHash: hashToken(accessToken),
      refreshTokenHash: hashToken(refreshToken),
      scope,
      accessExpiresAt: now + ctx.config.ACCESS_TOKEN_TTL_SECONDS * 1000,
      refreshExpiresAt: now + ctx.config.REFRESH_TOKEN_TTL_SECONDS * 1000,
      createdAt: now,
    },
    response: { access_token: accessToken, token_type: 'Bearer', expires_in: ctx.config.ACCESS_TOKEN_TTL_SECONDS, refresh_token: refreshToken, scope },
  };
}
