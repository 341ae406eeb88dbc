import type OAuth2Server from '@node-oauth/oauth2-server';
import { hashToken } from '../../shared/crypto.ts';
import { invalidGrant, invalidRequest, invalidScope } from '../../shared/errors.ts';
import { findTokenByRefreshHash } from '../store.ts';
import type { RefreshToken } from '../model.ts';
import type { Grant } from './grant.ts';
import { isVisibleAscii } from './form.ts';
import { ModelGrant } from './modelGrant.ts';

/**
 * grant_type=refresh_token (RFC 6749 6) with rotation on every use and reuse detection (RFC 9700
 * 4.14.2), as an `extendedGrantTypes` class of @node-oauth/oauth2-server: its TokenHandler has
 * authenticated the client (TokenModel#getClient) when `handle` runs. Replaces the library's own
 * class (not exported), whose revoke-then-save cannot express a rotation that is the successor's
 * insert, a grace window, or a check of the client before any revocation. The grace window
 * (REFRESH_REUSE_GRACE_SECONDS, default 30 s) is Ory Hydra's graceful refresh (ory/hydra#1831): a
 * client whose refresh answer was lost retries with the only token it has.
 */
export class RefreshTokenGrant extends ModelGrant {
  async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token | null> {
    const form = this.formOf(request);

    // 1. The refresh_token parameter.
    if (!form.refresh_token) throw invalidRequest('Missing parameter: `refresh_token`');
    if (!isVisibleAscii(form.refresh_token)) throw invalidRequest('Invalid parameter: `refresh_token`');

    // 2. Issued to this client, checked before anything is revoked: another app presenting a rotated
    //    or expired token learns nothing and ends nothing (oidc-provider's findGrantSource).
    const token = await this.model.getRefreshToken(form.refresh_token);
    if (!token) throw invalidGrant('Invalid grant: refresh token is invalid');
    if (token.client.id !== client.id) throw invalidGrant('Invalid grant: refresh token was issued to another client');

    // 2b. A public client's refresh token is bound to the DPoP key its pair was issued for (RFC
    //     9449 5): without a proof of that key it is refused before anything else happens, so a
    //     stolen token is worth nothing and cannot end the chain. A confidential client's is bound
    //     by the client's own authentication, as the RFC leaves it.
    if (client.isPublic === true && token.row.dpopJkt !== null && this.model.dpopJkt !== token.row.dpopJkt)
      throw invalidGrant('Invalid grant: refresh token is bound to another DPoP key');

    // 3. The token must stand: not revoked, nor its grant.
    if (token.row.revokedAt !== null || token.row.authorizationRevokedAt !== null)
      throw invalidGrant('Invalid grant: refresh token is invalid');

    // 4. Presented again after its rotation. After the grace window it is reuse: whoever holds the
    //    chain may be an attacker, so it goes, proxy tokens included (RFC 9700 4.14.2). Within the
    //    window (a client retrying a refresh whose answer was lost) it is a replay (step 7). The
    //    window is from the rotation's commit to this request's arrival, so a request the store
    //    held up (a stall) is judged by when it was sent, not by when it could run.
    const window = this.model.graceWindowMs;
    const rotatedAt = token.row.rotatedAt;
    if (rotatedAt !== null && this.model.arrivedAt - rotatedAt > window) {
      await this.model.revokeToken(token, 'refresh token reused; its chain revoked');
      throw invalidGrant('Invalid grant: refresh token is invalid');
    }

    // 5. Unexpired.
    if (token.refreshTokenExpiresAt!.getTime() < Date.now())
      throw invalidGrant('Invalid grant: refresh token has expired');

    // 6. Scope: the grant's, or a subset of it for this access token only (6: an omitted scope is
    //    the one originally granted, so the grant keeps its own).
    const scope = await this.validateScope(token.user, client, this.getScope(request));
    if (!scope) throw invalidScope('Invalid scope: Unable to add extra scopes');
    // RFC 8707 2.2, like scope: the access token may be for one of the grant's resources only
    // (invalid_target otherwise); the new refresh token keeps the grant's whole set.
    this.model.targetAudience(form.resource);

    // 7. Replay within the window: the same successor pair as the rotation's answer (step 9).
    if (rotatedAt !== null) return this.replay(token, client);

    // 8. Rotate: the new pair (with an ID token when the scope keeps `openid`, OpenID Connect Core
    //    12.2) is stored as the token's successor, in one statement that also checks that the token
    //    and its grant stand; a token has one successor at most (a unique key). The window runs from
    //    when the rotation was seen committed: after a slow statement (a lock, a stalled store) that
    //    time is recorded, so no stall turns a retry into reuse. If the request fails before the
    //    rotation, the old token still works.
    const pair = await this.model.withIdToken(await this.newPair(token, client, scope));
    const began = Date.now();
    const rotated = await this.model.saveToken({ ...pair, rotates: token.row.id }, client, token.user);
    if (rotated) {
      if (Date.now() - began > window / 10) await this.model.rotationSeenAt(token, Date.now());
      return rotated;
    }
    // Lost: a concurrent request rotated it after our read (a retry; within the window, since the
    // rotation is this recent), or the token or grant was revoked meanwhile.
    const now = await this.model.reread(token);
    if (!now || now.revokedAt !== null || now.authorizationRevokedAt !== null)
      throw invalidGrant('Invalid grant: refresh token is invalid');
    if (window === 0) {
      await this.model.revokeToken(token, 'refresh token used concurrently; its chain revoked');
      throw invalidGrant('Invalid grant: refresh token is invalid or could not be revoked');
    }
    return this.replay(token, client);
  }

  /**
   * 9. A replay within the window gets the same successor pair as every other presentation of the
   *    token, from the copy sealed with it for the window: no pair is revoked, so no order of
   *    abandoned and retried requests leaves a client a dead pair, and the grant keeps one live
   *    refresh token. A token whose successor was used since is an older generation: reuse, as in
   *    step 4, unless this request came in before that use (an abandoned request run late, after
   *    a stall): then it has nothing to answer with, and revokes nothing.
   */
  private async replay(token: RefreshToken, client: OAuth2Server.Client): Promise<OAuth2Server.Token> {
    const replay = await this.model.successorPair(token);
    if (replay === 'gone') throw invalidGrant('Invalid grant: refresh token is invalid');
    if ('olderGeneration' in replay) {
      if (replay.olderGeneration <= this.model.arrivedAt) {
        await this.model.revokeToken(token, 'refresh token of an older generation replayed; its chain revoked');
      }
      throw invalidGrant('Invalid grant: refresh token is invalid');
    }
    return this.model.answer(replay.pair, client, token.user);
  }

  private async newPair(
    token: RefreshToken,
    client: OAuth2Server.Client,
    scope: string[],
  ): Promise<OAuth2Server.Token> {
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

/** The registry's entry (registry.ts): RFC 6749 6, for the refresh tokens of every other grant. */
export const refreshToken: Grant = {
  type: 'refresh_token',
  handler: RefreshTokenGrant,
  publicClients: true,
  metricsLabel: 'refresh_token',
  presented: async (db, { refresh_token: token }) =>
    token && isVisibleAscii(token) ? { refreshToken: await findTokenByRefreshHash(db, hashToken(token)) } : {},
};
