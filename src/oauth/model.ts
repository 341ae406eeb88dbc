import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../context.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { joinScopes, splitScope, isScope } from './scopes.ts';
import * as store from './store.ts';
import { authenticateClient, clientSecretMatches } from './clients.ts';

// The knex model behind @node-oauth/oauth2-server. The library calls the model functions one by
// one; the request's state lives in AsyncLocalStorage. No transaction: each grant has one
// conditional UPDATE that decides, on its own, which of two concurrent requests wins.
//
// - Code: the code row is read with its client's secret hash (client authentication needs no query
//   of its own), consumed by `UPDATE ... WHERE used_at IS NULL` before PKCE and the redirect URI are
//   checked (as the library intends: a failed attempt burns the code), then the tokens are inserted.
// - Refresh: the token row is read with its client's secret hash; the new pair is inserted first,
//   and only then is the old one rotated by `UPDATE ... WHERE rotated_at IS NULL`. If that update
//   loses, the refresh token was presented twice: the grant is revoked, new pair included. If the
//   request fails before the rotation, the old refresh token still works and nothing is lost.
// Three round trips per grant (was six with BEGIN and COMMIT and a separate client lookup).

interface Exchange {
  db: Knex;
  /** Hash of the request's code or refresh token, so that getClient can read it with the client. */
  codeHash?: string;
  refreshHash?: string;
  /** Read once, by whichever model function needs it first (getClient, as the library calls it). */
  row?: Promise<store.CodeRow | store.RefreshTokenRow | null>;
  code?: store.CodeRow;
  refresh?: store.RefreshTokenRow;
}

export const exchangeContext = new AsyncLocalStorage<Exchange>();

function current(): Exchange {
  const exchange = exchangeContext.getStore();
  if (!exchange) throw new Error('oauth model used outside a token request');
  return exchange;
}

function scopesOf(scope: string): string[] {
  return splitScope(scope);
}

async function readGrantRow(exchange: Exchange): Promise<store.CodeRow | store.RefreshTokenRow | null> {
  if (exchange.codeHash) {
    exchange.code = (await store.findCodeByHash(exchange.db, exchange.codeHash)) ?? undefined;
    return exchange.code ?? null;
  }
  if (exchange.refreshHash) {
    exchange.refresh = (await store.findTokenByRefreshHash(exchange.db, exchange.refreshHash)) ?? undefined;
    return exchange.refresh ?? null;
  }
  return null;
}

/** The request's code or refresh token row, read once; getClient and the grant share it. */
function grantRow(exchange: Exchange): Promise<store.CodeRow | store.RefreshTokenRow | null> {
  exchange.row ??= readGrantRow(exchange);
  return exchange.row;
}

const GRANTS = ['authorization_code', 'refresh_token'];

export function createModel(ctx: AppContext): OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel {
  return {
    async getClient(clientId: string, clientSecret: string): Promise<OAuth2Server.Client | null> {
      // Every registered application is confidential: a secret is always required (RFC 6749 2.3).
      if (!clientSecret) return null;
      const exchange = current();
      const row = await grantRow(exchange);
      if (row?.clientId === clientId) {
        return clientSecretMatches(row.clientSecretHash, clientSecret) ? { id: clientId, grants: GRANTS } : null;
      }
      // No such code or token, or another client's: authenticate the client on its own (RFC 6749
      // 5.2 wants invalid_client before invalid_grant); the grant then fails.
      const client = await authenticateClient(exchange.db, clientId, clientSecret);
      return client ? { id: client.clientId, grants: GRANTS } : null;
    },

    async getAuthorizationCode(code: string) {
      const exchange = current();
      await grantRow(exchange);
      const found = exchange.code;
      if (!found) return null;
      if (found.usedAt !== null) {
        // RFC 6749 4.1.2 / RFC 9700 4.2.4: a replayed code may have been stolen; revoke what it issued.
        await store.revokeTokensIssuedFromCode(exchange.db, found.id);
        ctx.logger.warn({ authorizationId: found.authorizationId }, 'authorization code replayed; tokens issued from it revoked');
        return null;
      }
      return {
        authorizationCode: code,
        expiresAt: new Date(found.expiresAt),
        redirectUri: found.redirectUri,
        scope: scopesOf(found.scope),
        codeChallenge: found.codeChallenge ?? undefined,
        codeChallengeMethod: found.codeChallengeMethod ?? undefined,
        client: { id: found.clientId, grants: [] },
        user: { id: found.userId },
      };
    },

    async revokeAuthorizationCode() {
      const exchange = current();
      // Conditional: of two concurrent exchanges of one code, only the first flips used_at.
      return store.markCodeUsed(exchange.db, exchange.code!.id, Date.now());
    },

    async saveAuthorizationCode() {
      throw new Error('codes are issued by the consent handler (src/oauth/decision.ts)');
    },

    async getRefreshToken(refreshToken: string) {
      const exchange = current();
      await grantRow(exchange);
      const row = exchange.refresh;
      if (!row || row.revokedAt !== null || row.authorizationRevokedAt !== null) return null;
      if (row.rotatedAt !== null) {
        // RFC 9700 4.14.2: a rotated (or revoked) refresh token came back; whoever holds the
        // family may be an attacker, so the whole authorization goes.
        await store.revokeAuthorization(exchange.db, row.authorizationId, Date.now());
        ctx.logger.warn({ authorizationId: row.authorizationId }, 'refresh token reused; authorization revoked');
        return null;
      }
      return {
        refreshToken,
        refreshTokenExpiresAt: new Date(row.refreshExpiresAt),
        scope: scopesOf(row.scope),
        client: { id: row.clientId, grants: [] },
        user: { id: row.userId },
      };
    },

    async revokeToken() {
      // Rotation happens in saveToken, after the new pair is stored (see the top of this file).
      return true;
    },

    async validateScope(_user, _client, scope) {
      // Codes carry scopes already validated at /oauth/authorize; refresh may only narrow them.
      if (!scope || scope.length === 0 || !scope.every(isScope)) return false;
      return scope;
    },

    async generateAccessToken() {
      return newToken('gho');
    },

    async generateRefreshToken() {
      return newToken('ghr');
    },

    async saveToken(token, client, user) {
      const exchange = current();
      const source = exchange.code ?? exchange.refresh!;
      await store.insertToken(exchange.db, {
        authorizationId: source.authorizationId,
        codeId: exchange.code?.id ?? exchange.refresh!.codeId,
        accessTokenHash: hashToken(token.accessToken),
        refreshTokenHash: hashToken(token.refreshToken!),
        scope: joinScopes(token.scope ?? []),
        accessExpiresAt: token.accessTokenExpiresAt!.getTime(),
        refreshExpiresAt: token.refreshTokenExpiresAt!.getTime(),
        createdAt: Date.now(),
      });
      const refresh = exchange.refresh;
      if (refresh && !(await store.markTokenRotated(exchange.db, refresh.id, Date.now()))) {
        // A concurrent request rotated this refresh token first: it was presented twice, which is
        // reuse however close together (RFC 9700 4.14.2). Revoke the grant, as getRefreshToken does
        // for a later reuse, so both timings end the same way; the pair just stored dies with it.
        await store.revokeAuthorization(exchange.db, refresh.authorizationId, Date.now());
        ctx.logger.warn({ authorizationId: refresh.authorizationId }, 'refresh token used concurrently; authorization revoked');
        throw new OAuth2Server.InvalidGrantError('Invalid grant: refresh token is invalid or could not be revoked');
      }
      return { ...token, client, user };
    },

    async getAccessToken() {
      // Resource requests are authenticated by accessTokenAuth.ts, not by the library.
      return null;
    },
  };
}
