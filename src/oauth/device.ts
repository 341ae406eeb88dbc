import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { AppContext } from '../context.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { invalidRequest, invalidScope, invalidTarget } from '../shared/errors.ts';
import { findUserById } from '../accounts/users.ts';
import { getOrCreateSecret } from '../accounts/secrets.ts';
import { authenticatedClient, findClientByClientId, scopesNotRegistered, type OAuthClient } from './clients.ts';
import { isScope, joinScopes, splitScope } from './scopes.ts';
import { requestedResources } from './resources.ts';
import * as store from './device.store.ts';

// The device authorization grant (RFC 8628): the device's request (3.1-3.2, the endpoint below),
// and the user's side on the /device page (3.3, src/console/pages/device.ts), through the
// services below. The device's polls are the grant grants/deviceCode.ts.

/** RFC 8628 6.1: base-20 consonants (no vowels: no words; no look-alikes), 8 of them: 20^8 ≈ 2^34.5. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
/** RFC 8628 3.2's `interval` (its default), and what each slow_down adds (3.5). */
export const POLL_INTERVAL_S = 5;
/** Expired requests stay a day for the answers to late polls (expired_token), then go. */
const KEEP_EXPIRED_MS = 24 * 3600_000;

/** A new user code, shown as XXXX-XXXX. */
export function newUserCode(): string {
  const letters = Array.from({ length: USER_CODE_LENGTH }, () => USER_CODE_ALPHABET[randomInt(20)]).join('');
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/**
 * A user code as typed (RFC 8628 6.1): case, dashes and spaces do not matter. Null when it cannot
 * be one (other characters, another length): no lookup, and a clear message.
 */
export function normalizeUserCode(input: string): string | null {
  const letters = input.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== USER_CODE_LENGTH) return null;
  return [...letters].every((c) => USER_CODE_ALPHABET.includes(c)) ? letters : null;
}

const userCodeKeys = new WeakMap<Knex, Promise<Buffer>>();

/**
 * How a user code is stored: an HMAC under a service secret (sealed at rest, as the session key),
 * not a plain hash: a code has only about 2^34.5 values, which a reader of the table could try
 * against a plain hash while the code lives.
 */
async function userCodeHash(ctx: AppContext, normalized: string): Promise<string> {
  let key = userCodeKeys.get(ctx.db);
  if (!key) {
    key = getOrCreateSecret(ctx, 'device_user_code_key', () => randomBytes(32).toString('base64url')).then((v) =>
      Buffer.from(v, 'base64url'),
    );
    key.catch(() => userCodeKeys.delete(ctx.db));
    userCodeKeys.set(ctx.db, key);
  }
  return createHmac('sha256', await key)
    .update(normalized)
    .digest('hex');
}

/** POST /api/open/oauth/device_authorization (RFC 8628 3.1-3.2), client authentication as at the token endpoint. */
export function startDeviceAuthorization(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const client = await authenticatedClient(ctx, req);
    // As the authorization endpoint checks it (authorize.ts checkScope).
    const scopes = splitScope((req.body as { scope?: string }).scope);
    if (scopes.length === 0) throw invalidRequest('scope is required.');
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length) throw invalidScope(`Unknown scope: ${unknown.join(' ')}`);
    // RFC 8707 2: the resources the tokens will be for, as at the authorization endpoint.
    const resources = requestedResources(
      ctx.config.BASE_URL,
      (req.body as { resource?: unknown }).resource,
      invalidTarget,
    );
    const unregistered = scopesNotRegistered(client, scopes);
    if (unregistered.length) throw invalidScope(`Not a scope this client registered: ${unregistered.join(' ')}`);

    const deviceCode = newToken('dvc');
    const userCode = newUserCode();
    const now = ctx.now();
    const ttl = ctx.config.DEVICE_CODE_TTL_SECONDS;
    await store.insertDeviceAuthorization(ctx.db, {
      deviceCodeHash: hashToken(deviceCode),
      userCodeHash: await userCodeHash(ctx, normalizeUserCode(userCode)!),
      applicationId: client.id,
      scope: joinScopes(scopes),
      intervalS: POLL_INTERVAL_S,
      expiresAt: now + ttl * 1000,
      createdAt: now,
      resources,
    });
    store
      .deleteExpiredDeviceAuthorizations(ctx.db, now - KEEP_EXPIRED_MS)
      .catch((err: unknown) =>
        ctx.logger.debug({ err }, 'expired device authorizations not cleared; the next request will'),
      );
    const verificationUri = `${ctx.config.BASE_URL}/device`;
    res
      .set('Cache-Control', 'no-store')
      .status(200)
      .json({
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
        expires_in: ttl,
        interval: POLL_INTERVAL_S,
      });
  };
}

/** A pending device request as the /device page shows it for consent. */
export interface DeviceRequest {
  id: number;
  /** The user code, normalised (the form carries it to the decision). */
  userCode: string;
  client: OAuthClient;
  ownerLogin: string | undefined;
  scope: string;
}

/** The pending, unexpired request a typed user code names; null for a malformed, unknown, expired or used code. */
export async function findDeviceRequest(ctx: AppContext, typed: string): Promise<DeviceRequest | null> {
  const userCode = normalizeUserCode(typed);
  if (!userCode) return null;
  const row = await store.findPendingByUserCodeHash(ctx.db, await userCodeHash(ctx, userCode), ctx.now());
  if (!row) return null;
  const client = await findClientByClientId(ctx, row.clientId);
  if (!client) return null;
  const owner = client.ownerUserId === null ? undefined : await findUserById(ctx, client.ownerUserId);
  return { id: row.id, userCode, client, ownerLogin: owner?.login, scope: row.scope };
}

/**
 * The user's decision on a request (RFC 8628 3.3): once per request, while it is pending and
 * unexpired; false otherwise. `authTime`: when the user logged in (ms), for an ID token.
 */
export async function decideDeviceRequest(
  ctx: AppContext,
  request: DeviceRequest,
  decision: { approved: boolean; userId: number; authTime: number },
): Promise<boolean> {
  return store.decideDeviceAuthorization(ctx.db, request.id, decision, ctx.now());
}
