import type { AppContext } from '../../context.ts';
import { hashToken } from '../../shared/crypto.ts';
import { invalidGrant, invalidRequest, invalidScope } from '../../shared/errors.ts';
import { revocationLease } from '../../shared/principalLease.ts';
import type { ClientCredentials } from '../clientAuth.ts';
import { splitScope } from '../scopes.ts';
import * as store from '../store.ts';
import { authenticateGrantClient } from './client.ts';
import { isVisibleAscii, type TokenForm } from './form.ts';
import { issueRotatedTokens, issueTokens, type TokenResponse } from './issue.ts';

// grant_type=refresh_token (RFC 6749 6) with rotation on every use and reuse detection (RFC 9700
// 4.14.2). No transaction: the new pair's insert is the rotation, and a unique key decides which of
// two concurrent refreshes wins.

export async function refreshTokenGrant(ctx: AppContext, form: TokenForm, credentials: ClientCredentials): Promise<TokenResponse> {
  // 1. Read the refresh token, with its client's secret hash (authenticating the client costs no query).
  const token = form.refresh_token ? await store.findTokenByRefreshHash(ctx.db, hashToken(form.refresh_token)) : null;

  // 2. Authenticate the client.
  const clientId = await authenticateGrantClient(ctx, credentials, token);

  // 3. The token must stand: not revoked, nor its grant.
  if (!form.refresh_token) throw invalidRequest('Missing parameter: `refresh_token`');
  if (!isVisibleAscii(form.refresh_token)) throw invalidRequest('Invalid parameter: `refresh_token`');
  if (!token || token.revokedAt !== null || token.authorizationRevokedAt !== null) throw invalidGrant('Invalid grant: refresh token is invalid');

  // 4. Reuse: a rotated refresh token came back after the grace window. Whoever holds the family
  //    may be an attacker, so the whole grant goes, proxy tokens included (RFC 9700 4.14.2).
  //    Within the window (a client retrying a refresh whose answer was lost), it gets a new pair.
  if (token.rotatedAt !== null && !withinGrace(ctx, token.rotatedAt)) {
    await revokeOnReuse(ctx, token.authorizationId, 'refresh token reused; authorization revoked');
    throw invalidGrant('Invalid grant: refresh token is invalid');
  }

  // 5. Issued to this client, and unexpired.
  if (token.clientId !== clientId) throw invalidGrant('Invalid grant: refresh token was issued to another client');
  if (token.refreshExpiresAt < Date.now()) throw invalidGrant('Invalid grant: refresh token has expired');

  // 6. Scope: the granted one, or a subset of it (6: "MUST NOT include any scope not originally granted").
  const scope = narrowedScope(form.scope, splitScope(token.scope));

  // 7. Rotate: the new pair is stored as the token's successor, in one statement that also checks
  //    that the grant stands. A token has one successor at most (a unique key): if the insert
  //    loses, a concurrent request presented the same token, and within the window that is a retry
  //    that gets a pair of its own; otherwise (the grant was revoked meanwhile) it ends as step 4
  //    does. A token rotated within the window (step 4) stays as it is and gets a new pair. If the
  //    request fails before the rotation, the old token still works.
  const grant = { authorizationId: token.authorizationId, codeId: token.codeId, scope };
  if (token.rotatedAt === null) {
    const rotated = await issueRotatedTokens(ctx, grant, token.id);
    if (rotated) return rotated;
    if (!(await rotatedWithinGrace(ctx, form.refresh_token))) {
      await revokeOnReuse(ctx, token.authorizationId, 'refresh token used concurrently; authorization revoked');
      throw invalidGrant('Invalid grant: refresh token is invalid or could not be revoked');
    }
  }
  return issueTokens(ctx, grant);
}

/**
 * The grace window (REFRESH_REUSE_GRACE_SECONDS, default 30 s) in which a rotated refresh token may
 * be presented again and gets a new pair without revoking the grant, as Ory Hydra's graceful
 * refresh (ory/hydra#1831): a client whose refresh answer was lost retries with the only token it has.
 */
function withinGrace(ctx: AppContext, rotatedAt: number): boolean {
  return Date.now() - rotatedAt <= ctx.config.REFRESH_REUSE_GRACE_SECONDS * 1000;
}

/** After losing the rotation to a concurrent refresh: the token now stands rotated (not revoked) within the window. */
async function rotatedWithinGrace(ctx: AppContext, refreshToken: string): Promise<boolean> {
  const now = await store.findTokenByRefreshHash(ctx.db, hashToken(refreshToken));
  return !!now && now.revokedAt === null && now.authorizationRevokedAt === null && now.rotatedAt !== null && withinGrace(ctx, now.rotatedAt);
}

async function revokeOnReuse(ctx: AppContext, authorizationId: number, message: string): Promise<void> {
  await store.revokeAuthorization(ctx.db, authorizationId, Date.now());
  ctx.logger.warn({ authorizationId }, message);
  await revocationLease.settle();
}

/** The requested scope (RFC 6749 3.3 syntax), which may only narrow the granted one. */
function narrowedScope(requested: string | undefined, granted: string[]): string[] {
  if (requested === undefined) return granted;
  const trimmed = requested.trim();
  // NQSCHAR (RFC 6749 A.4): printable ASCII except `"` and `\`.
  if (!/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/.test(trimmed)) throw invalidScope('Invalid parameter: `scope`');
  const scopes = trimmed.split(/\s+/);
  if (!scopes.every((s) => granted.includes(s))) throw invalidScope('Invalid scope: Unable to add extra scopes');
  return scopes;
}
