import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import type OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../context.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { joinScopes, splitScope, isScope } from './scopes.ts';
import * as store from './store.ts';

// The knex model behind @node-oauth/oauth2-server. One token request runs in one transaction
// (held in AsyncLocalStorage, since the library calls the model functions one by one): consuming a
// code or a refresh token and issuing the new tokens commit together, and the consuming UPDATE is
// conditional, so of two concurrent exchanges of one code only one can win (RFC 6749 4.1.2).

interface Exchange {
  trx: Knex.Transaction;
  code?: store.CodeRow;
  refresh?: store.TokenRow;
}

export const exchangeContext = new AsyncLocalStorage<Exchange>();

function current(): Exchange {
  const exchange = exchangeContext.getStore();
  if (!exchange) throw new Error('oauth model used outside a token request transaction');
  return exchange;
}

interface Client extends OAuth2Server.Client {
  id: string;
  applicationId: number;
}

function scopesOf(scope: string): string[] {
  return splitScope(scope);
}

export function createModel(ctx: AppContext): OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel {
  return {
    async getClient(clientId: string, clientSecret: string): Promise<Client | null> {
      // Every registered application is confidential: a secret is always required (RFC 6749 2.3).
      if (!clientSecret) return null;
      const client = await store.authenticateClient(current().trx, clientId, clientSecret);
      if (!client) return null;
      return { id: client.clientId, applicationId: client.id, grants: ['authorization_code', 'refresh_token'], redirectUris: [client.redirectUri] };
    },

    async getAuthorizationCode(code: string) {
      const exchange = current();
      const row = await store.findCodeByHash(exchange.trx, hashToken(code));
      if (!row) return null;
      if (row.usedAt !== null) {
        // RFC 6749 4.1.2 / RFC 9700 4.2.4: a replayed code may have been stolen; revoke what it issued.
        await store.revokeTokensIssuedFromCode(exchange.trx, row.id);
        ctx.logger.warn({ authorizationId: row.authorizationId }, 'authorization code replayed; tokens issued from it revoked');
        return null;
      }
      exchange.code = row;
      return {
        authorizationCode: code,
        expiresAt: new Date(row.expiresAt),
        redirectUri: row.redirectUri,
        scope: scopesOf(row.scope),
        codeChallenge: row.codeChallenge ?? undefined,
        codeChallengeMethod: row.codeChallengeMethod ?? undefined,
        client: { id: row.clientId, grants: [] },
        user: { id: row.userId },
      };
    },

    async revokeAuthorizationCode() {
      const exchange = current();
      // Conditional: only the first consumer flips used_at (row lock in both dialects).
      return store.markCodeUsed(exchange.trx, exchange.code!.id, Date.now());
    },

    async saveAuthorizationCode() {
      throw new Error('codes are issued by the consent handler (src/oauth/decision.ts)');
    },

    async getRefreshToken(refreshToken: string) {
      const exchange = current();
      const row = await store.findTokenByRefreshHash(exchange.trx, hashToken(refreshToken));
      if (!row || row.revokedAt !== null || row.authorizationRevokedAt !== null) return null;
      if (row.rotatedAt !== null) {
        // RFC 9700 4.14.2: a rotated (or revoked) refresh token came back; whoever holds the
        // family may be an attacker, so the whole authorization goes.
        await store.revokeAuthorization(exchange.trx, row.authorizationId, Date.now());
        ctx.logger.warn({ authorizationId: row.authorizationId }, 'refresh token reused; authorization revoked');
        return null;
      }
      exchange.refresh = row;
      return {
        refreshToken,
        refreshTokenExpiresAt: new Date(row.refreshExpiresAt),
        scope: scopesOf(row.scope),
        client: { id: row.clientId, grants: [] },
        user: { id: row.userId },
      };
    },

    async revokeToken() {
      const exchange = current();
      const refresh = exchange.refresh!;
      if (await store.markTokenRotated(exchange.trx, refresh.id, Date.now())) return true;
      // A concurrent request rotated this refresh token first (we waited on its row lock): the
      // token was presented twice, which is reuse however close together (RFC 9700 4.14.2). Revoke
      // the grant as getRefreshToken does for a later reuse, so both timings end the same way.
      await store.revokeAuthorization(exchange.trx, refresh.authorizationId, Date.now());
      ctx.logger.warn({ authorizationId: refresh.authorizationId }, 'refresh token used concurrently; authorization revoked');
      return false;
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
      const scope = joinScopes(token.scope ?? []);
      await store.insertToken(exchange.trx, {
        authorizationId: source.authorizationId,
        codeId: exchange.code?.id ?? exchange.refresh!.codeId,
        accessTokenHash: hashToken(token.accessToken),
        refreshTokenHash: hashToken(token.refreshToken!),
        scope,
        accessExpiresAt: token.accessTokenExpiresAt!.getTime(),
        refreshExpiresAt: token.refreshTokenExpiresAt!.getTime(),
        createdAt: Date.now(),
      });
      return { ...token, client, user };
    },

    async getAccessToken() {
      // Resource requests are authenticated by accessTokenAuth.ts, not by the library.
      return null;
    },
  };
}
