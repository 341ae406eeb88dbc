import type OAuth2Server from '@node-oauth/oauth2-server';
import { hashToken } from '../../shared/crypto.ts';
import {
  authorizationPending,
  deviceAccessDenied,
  deviceCodeExpired,
  invalidGrant,
  invalidRequest,
  pollingTooFast,
} from '../../shared/errors.ts';
import { revocationLease } from '../../shared/principalLease.ts';
import { revokeChain } from '../chain.store.ts';
import { POLL_INTERVAL_S } from '../device.ts';
import { findByDeviceCodeHash, markDeviceCodeUsed, recordPoll, type DeviceRow } from '../device.store.ts';
import { splitScope } from '../scopes.ts';
import type { Grant } from './grant.ts';
import { isVisibleAscii } from './form.ts';
import { ModelGrant } from './modelGrant.ts';

/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 3.4-3.5), as an
 * `extendedGrantTypes` class of @node-oauth/oauth2-server: its TokenHandler has authenticated the
 * client (TokenModel#getClient, by its secret: this grant presents no stored credential) when
 * `handle` runs. The checks follow node-oidc-provider's device_code grant; the pair is stored
 * without an authorization row (TokenModel#grantedDirectly).
 */
export class DeviceCodeGrant extends ModelGrant {
  async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token | null> {
    const form = this.formOf(request);
    const db = this.model.ctx.db;

    // 1. The device_code parameter.
    if (!form.device_code) throw invalidRequest('Missing parameter: `device_code`');
    if (!isVisibleAscii(form.device_code)) throw invalidRequest('Invalid parameter: `device_code`');

    // 2. The code must exist and be this client's: another client learns nothing and ends nothing.
    const row = await findByDeviceCodeHash(db, hashToken(form.device_code));
    if (!row || row.clientId !== client.id) throw invalidGrant('Invalid grant: device code is invalid');

    // 3. Single-use: a code redeemed again may have been stolen, so what it issued goes (as
    //    oidc-provider revokes the grant of a consumed device code).
    if (row.status === 'used') {
      await this.revokeIssued(row);
      throw invalidGrant('Invalid grant: device code is invalid');
    }

    // 4. Unexpired (3.5 expired_token), then the user's decision: denied (access_denied), or none
    //    yet (authorization_pending, or slow_down for a poll sooner than the interval).
    const now = this.model.ctx.now();
    if (row.expiresAt <= now) throw deviceCodeExpired();
    if (row.status === 'denied') throw deviceAccessDenied();
    if (row.status === 'pending') {
      const tooSoon = row.lastPolledAt !== null && now - row.lastPolledAt < row.intervalS * 1000;
      const interval = tooSoon ? row.intervalS + POLL_INTERVAL_S : row.intervalS;
      await recordPoll(db, row.id, now, interval);
      throw tooSoon ? pollingTooFast(interval) : authorizationPending();
    }

    // 5. Approved, under the user's grant. RFC 8707 2.2: a `resource` must be one the device
    //    authorization named (invalid_target), checked before the code is used up.
    this.model.grantedDirectly({
      userId: row.userId!,
      applicationId: row.applicationId,
      clientId: row.clientId,
      idTokenAlg: row.idTokenAlg,
      scope: row.scope,
      authTime: row.authTime,
      resources: row.resources,
    });
    this.model.targetAudience(form.resource);

    // 6. Consume it. Conditional: of concurrent polls only the first flips it, so one pair is
    //    issued; the others are told the code is used (nothing revoked: they lost a race).
    if (!(await markDeviceCodeUsed(db, row.id))) throw invalidGrant('Invalid grant: device code is invalid');

    // 7. Issue the pair, with an ID token when `openid` was granted.
    const user = { id: row.userId! };
    const scope = splitScope(row.scope);
    const pair: OAuth2Server.Token = {
      accessToken: await this.generateAccessToken(client, user, scope),
      accessTokenExpiresAt: this.getAccessTokenExpiresAt(),
      refreshToken: await this.generateRefreshToken(client, user, scope),
      refreshTokenExpiresAt: this.getRefreshTokenExpiresAt(),
      scope,
      client,
      user,
    };
    return this.model.saveToken(await this.model.withIdToken(pair), client, user);
  }

  /**
   * The pairs of the user and client stored without an authorization (the device flow's, and any
   * other grant's without a code: a device code carries no chain of its own), refreshes included.
   */
  private async revokeIssued(row: DeviceRow): Promise<void> {
    await revokeChain(
      this.model.ctx.db,
      { authorizationId: null, userId: row.userId!, applicationId: row.applicationId },
      Date.now(),
    );
    this.model.ctx.logger.warn({ deviceAuthorizationId: row.id }, 'device code redeemed again; its pairs revoked');
    await revocationLease.settle();
  }
}

/** The registry's entry (registry.ts): RFC 8628, bringing its device authorization endpoint (4). */
export const deviceCode: Grant = {
  type: 'urn:ietf:params:oauth:grant-type:device_code',
  handler: DeviceCodeGrant,
  publicClients: true,
  metricsLabel: 'device_code',
  metadata: (base) => ({ device_authorization_endpoint: `${base}/api/open/oauth/device_authorization` }),
};
