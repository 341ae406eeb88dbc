import OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../../context.ts';
import { invalidGrant, invalidRequest, invalidScope } from '../../shared/errors.ts';
import type { RefreshToken, TokenModel } from '../model.ts';
import { isVisibleAscii, type TokenForm } from './form.ts';

/**
 * grant_type=refresh_token (RFC 6749 6) with rotation on every use and reuse detection (RFC 9700
 * 4.14.2), as an `extendedGrantTypes` class of @node-oauth/oauth2-server: its TokenHandler has
 * authenticated the client (TokenModel#getClient) when `handle` runs. Replaces the library's own
 * class (not exported), whose revoke-then-save cannot express a rotation that is the successor's
 * insert, a grace window, or a check of the client before any revocation.
 */
export class RefreshTokenGrant extends OAuth2Server.AbstractGrantType {
  readonly model: TokenModel;

  constructor(options: OAuth2Server.TokenOptions) {
    super(options);
    this.model = (options as { model: TokenModel }).model;
  }

  async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token | null> {
    const form = request.body as TokenForm;

    // 1. The refresh_token parameter.
    if (!form.refresh_token) throw invalidRequest('Missing parameter: `refresh_token`');
    if (!isVisibleAscii(form.refresh_token)) throw invalidRequest('Invalid parameter: `refresh_token`');

    // 2. Issued to this client, checked before anything is revoked: another app presenting a rotated
    //    or expired token learns nothing and ends nothing (oidc-provider's findGrantSource).
    const token = await this.model.getRefreshToken(form.refresh_token);
    if (!token) throw invalidGrant('Invalid grant: refresh token is invalid');
    if (token.client.id !== client.id) throw invalidGrant('Invalid grant: refresh token was issued to another client');

    // 3. The token must stand: not revoked, nor its grant.
    if (token.row.revokedAt !== null || token.row.authorizationRevokedAt !== null) throw invalidGrant('Invalid grant: refresh token is invalid');

    // 4. Reuse: a rotated refresh token came back after the grace window. Whoever holds the family
    //    may be an attacker, so the grant goes, proxy tokens included (RFC 9700 4.14.2). Within the
    //    window (a client retrying a refresh whose answer was lost), it gets a new pair.
    if (token.row.rotatedAt !== null && !withinGrace(this.model.ctx, token.row.rotatedAt)) {
      await this.model.revokeToken(token, 'refresh token reused; authorization revoked');
      throw invalidGrant('Invalid grant: refresh token is invalid');
    }

    // 5. Unexpired.
    if (token.refreshTokenExpiresAt!.getTime() < Date.now()) throw invalidGrant('Invalid grant: refresh token has expired');

    // 6. Scope: the grant's, or a subset of it for this access token only (6: an omitted scope is
    //    the one originally granted, so the grant keeps its own).
    const scope = await this.validateScope(token.user, client, this.getScope(request));
    if (!scope) throw invalidScope('Invalid scope: Unable to add extra scopes');

    // 7. Rotate: the new pair is stored as the token's successor, in one statement that also checks
    //    that the grant stands. A token has one successor at most (a unique key): if the insert
    //    loses, a concurrent request presented the same token, and within the window that is a retry
    //    that gets a pair of its own; otherwise (the grant was revoked meanwhile) it ends as step 4
    //    does. A token rotated within the window (step 4) stays as it is and gets a new pair. If the
    //    request fails before the rotation, the old token still works.
    if (token.row.rotatedAt === null) {
      const rotated = await this.model.saveToken({ ...(await this.newPair(token, client, scope)), rotates: token.row.id }, client, token.user);
      if (rotated) return rotated;
      const now = await this.model.reread(token);
      if (!now || now.revokedAt !== null || now.authorizationRevokedAt !== null || now.rotatedAt === null || !withinGrace(this.model.ctx, now.rotatedAt)) {
        await this.model.revokeToken(token, 'refresh token used concurrently; authorization revoked');
        throw invalidGrant('Invalid grant: refresh token is invalid or could not be revoked');
      }
    }
    return this.model.saveToken(await this.newPair(token, client, scope), client, token.user);
  }

  private async newPair(token: RefreshToken, client: OAuth2Server.Client, scope: string[]): Promise<OAuth2Server.Token> {
    return {
      accessToken: await this.generateAccessToken(client, token.user, scope),
      accessTokenExpiresAt: this.getAccessTokenExpiresAt(),
      refreshToken: await this.generateRefreshToken(client, token.user, scope),
      refreshTokenExpiresAt: this.getRefreshTokenExpiresAt(),
      scope,
      client,
      user: token.user,
    };
  }
}

/**
 * The grace window (REFRESH_REUSE_GRACE_SECONDS, default 30 s) in which a rotated refresh token may
 * be presented again and gets a new pair without revoking the grant, as Ory Hydra's graceful
 * refresh (ory/hydra#1831): a client whose refresh answer was lost retries with the only token it has.
 */
function withinGrace(ctx: AppContext, rotatedAt: number): boolean {
  return Date.now() - rotatedAt <= ctx.config.REFRESH_REUSE_GRACE_SECONDS * 1000;
}
