import { createHash } from 'node:crypto';
import type OAuth2Server from '@node-oauth/oauth2-server';
import { hashToken, safeEqual } from '../../shared/crypto.ts';
import { findCodeByHash } from '../store.ts';
import { invalidGrant, invalidRequest } from '../../shared/errors.ts';
import type { Code } from '../model.ts';
import type { Grant } from './grant.ts';
import { isVisibleAscii } from './form.ts';
import { ModelGrant } from './modelGrant.ts';

/**
 * grant_type=authorization_code (RFC 6749 4.1.3), with PKCE (RFC 7636 4.6) and replay revocation
 * (RFC 9700 4.2.4), as an `extendedGrantTypes` class of @node-oauth/oauth2-server: its TokenHandler
 * has authenticated the client (TokenModel#getClient) when `handle` runs. Replaces the library's
 * own class (not exported) to check the client before anything is revoked and to answer a
 * redirect_uri mismatch with invalid_grant (RFC 6749 5.2), as oidc-provider does.
 */
export class AuthorizationCodeGrant extends ModelGrant {
  async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token | null> {
    const form = this.formOf(request);

    // 1. The code parameter.
    if (!form.code) throw invalidRequest('Missing parameter: `code`');
    if (!isVisibleAscii(form.code)) throw invalidRequest('Invalid parameter: `code`');

    // 2. The code must exist and be this client's, checked before anything is revoked: another app
    //    presenting a used code learns nothing and ends nothing (oidc-provider's findGrantSource).
    const code = await this.model.getAuthorizationCode(form.code);
    if (!code || code.client.id !== client.id) throw invalidGrant('Invalid grant: authorization code is invalid');

    // 3. Unused: a code used twice may have been stolen (4.1.2, RFC 9700 4.2.4), so its chain goes.
    if (code.row.usedAt !== null) {
      await this.model.revokeToken(code, 'authorization code replayed; its chain revoked');
      throw invalidGrant('Invalid grant: authorization code is invalid');
    }

    // 4. Unexpired.
    if (code.expiresAt.getTime() < Date.now()) throw invalidGrant('Invalid grant: authorization code has expired');

    // 5. Consume it. Conditional: of two concurrent exchanges only the first flips used_at, and the
    //    loser is a replay too, however close together. Done before the checks below, so a wrong
    //    verifier or redirect_uri burns the code (no guessing), as the library's own class does.
    if (!(await this.model.revokeAuthorizationCode(code))) {
      await this.model.revokeToken(code, 'authorization code exchanged concurrently; its chain revoked');
      throw invalidGrant('Invalid grant: authorization code is invalid');
    }

    // 6. PKCE (RFC 7636 4.6): the verifier must hash to the challenge; none without a challenge.
    checkVerifier(code.codeChallenge, form.code_verifier);

    // 7. redirect_uri: present, and identical to the authorization request's (4.1.3); a mismatch
    //    is a grant that does not fit the request: invalid_grant (5.2).
    if (!form.redirect_uri || !/^[a-zA-Z][a-zA-Z0-9+.-]+:/.test(form.redirect_uri)) {
      throw invalidRequest('Invalid request: `redirect_uri` is not a valid URI');
    }
    if (form.redirect_uri !== code.redirectUri)
      throw invalidGrant('Invalid grant: `redirect_uri` does not match the authorization request');

    // 8. RFC 8707 2.2: a `resource` must be one the code was authorized for (invalid_target); none
    //    named, the access token is for every one of them.
    this.model.targetAudience(form.resource);

    // 9. Issue the pair (5.1) under the code's grant, tied to the code (its chain), with an ID token
    //    when `openid` was granted (OpenID Connect Core 3.1.3.3).
    return this.model.saveToken(await this.model.withIdToken(await this.newPair(code, client)), client, code.user);
  }

  private async newPair(code: Code, client: OAuth2Server.Client): Promise<OAuth2Server.Token> {
    const scope = code.scope ?? [];
    return {
      accessToken: await this.generateAccessToken(client, code.user, scope),
      accessTokenExpiresAt: this.getAccessTokenExpiresAt(),
      refreshToken: await this.generateRefreshToken(client, code.user, scope),
      refreshTokenExpiresAt: this.getRefreshTokenExpiresAt(),
      scope,
      client,
      user: code.user,
    };
  }
}

/** The registry's entry (registry.ts): RFC 6749 4.1, issuing under the code's authorization. */
export const authorizationCode: Grant = {
  type: 'authorization_code',
  handler: AuthorizationCodeGrant,
  publicClients: true,
  metricsLabel: 'authorization_code',
  presented: async (db, { code }) =>
    code && isVisibleAscii(code) ? { code: await findCodeByHash(db, hashToken(code)) } : {},
};

/** RFC 7636 4.1: 43-128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function checkVerifier(challenge: string | undefined, verifier: string | undefined): void {
  if (!challenge) {
    if (verifier) throw invalidGrant('Invalid grant: code verifier is invalid');
    return;
  }
  // Only S256 is accepted at /oauth/authorize (RFC 9700 2.1.1), so every stored challenge is S256.
  if (!verifier) throw invalidGrant('Missing parameter: `code_verifier`');
  if (!VERIFIER.test(verifier)) throw invalidRequest('Invalid parameter: `code_verifier`');
  const hash = createHash('sha256').update(verifier).digest('base64url');
  if (!safeEqual(hash, challenge)) throw invalidGrant('Invalid grant: code verifier is invalid');
}
