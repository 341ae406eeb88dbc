import { createHash } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { safeEqual, hashToken } from '../../shared/crypto.ts';
import { invalidGrant, invalidRequest } from '../../shared/errors.ts';
import { revocationLease } from '../../shared/principalLease.ts';
import type { ClientCredentials } from '../clientAuth.ts';
import { splitScope } from '../scopes.ts';
import * as store from '../store.ts';
import { authenticateGrantClient } from './client.ts';
import { issueTokens, type TokenResponse } from './issue.ts';
import { isVisibleAscii, type TokenForm } from './form.ts';

// grant_type=authorization_code (RFC 6749 4.1.3), with PKCE (RFC 7636 4.6) and replay revocation
// (RFC 9700 4.2.4). No transaction: the conditional consumption of the code decides, on its own,
// which of two concurrent exchanges wins.

export async function authorizationCodeGrant(ctx: AppContext, form: TokenForm, credentials: ClientCredentials): Promise<TokenResponse> {
  // 1. Read the code, with its client's secret hash (authenticating the client costs no query).
  const code = form.code ? await store.findCodeByHash(ctx.db, hashToken(form.code)) : null;

  // 2. Authenticate the client.
  const clientId = await authenticateGrantClient(ctx, credentials, code);

  // 3. The code must exist, be unused, be this client's and be unexpired (4.1.3).
  if (!form.code) throw invalidRequest('Missing parameter: `code`');
  if (!isVisibleAscii(form.code)) throw invalidRequest('Invalid parameter: `code`');
  if (!code) throw invalidGrant('Invalid grant: authorization code is invalid');
  if (code.usedAt !== null) {
    await revokeOnReplay(ctx, code.authorizationId, 'authorization code replayed; its grant revoked');
    throw invalidGrant('Invalid grant: authorization code is invalid');
  }
  if (code.clientId !== clientId) throw invalidGrant('Invalid grant: authorization code is invalid');
  if (code.expiresAt < Date.now()) throw invalidGrant('Invalid grant: authorization code has expired');

  // 4. Consume it. Conditional: of two concurrent exchanges only the first flips used_at. Done
  //    before the checks below, so a wrong verifier or redirect_uri burns the code too (no guessing).
  //    The loser of two concurrent exchanges is a replay too, however close together.
  if (!(await store.markCodeUsed(ctx.db, code.id, Date.now()))) {
    await revokeOnReplay(ctx, code.authorizationId, 'authorization code exchanged concurrently; its grant revoked');
    throw invalidGrant('Invalid grant: authorization code is invalid');
  }

  // 5. PKCE (RFC 7636 4.6): the verifier must hash to the challenge; none without a challenge.
  checkVerifier(code.codeChallenge, form.code_verifier);

  // 6. redirect_uri: identical to the authorization request's (4.1.3).
  if (!form.redirect_uri || !/^[a-zA-Z][a-zA-Z0-9+.-]+:/.test(form.redirect_uri)) {
    throw invalidRequest('Invalid request: `redirect_uri` is not a valid URI');
  }
  if (form.redirect_uri !== code.redirectUri) throw invalidRequest('Invalid request: `redirect_uri` is invalid');

  // 7. Issue the tokens (5.1).
  return issueTokens(ctx, { authorizationId: code.authorizationId, codeId: code.id, scope: splitScope(code.scope) });
}

/**
 * A code used twice may have been stolen (4.1.2, RFC 9700 4.2.4): its grant goes. The code has an
 * authorization row of its own (one per consent), so revoking it refuses exactly what the code led
 * to: its access and refresh tokens, those refreshes issued, and the proxy tokens minted through
 * the grant (they check the authorization on every call). Tokens a concurrent winning exchange
 * stores after this are born under the revoked grant: no interleaving leaves one standing.
 */
async function revokeOnReplay(ctx: AppContext, authorizationId: number, message: string): Promise<void> {
  await store.revokeAuthorization(ctx.db, authorizationId, Date.now());
  ctx.logger.warn({ authorizationId }, message);
  await revocationLease.settle();
}

/** RFC 7636 4.1: 43-128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function checkVerifier(challenge: string | null, verifier: string | undefined): void {
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
