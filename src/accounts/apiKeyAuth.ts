import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';
import { principalLease } from '../shared/principalLease.ts';
import { ACCESS_TOKEN_PREFIX, findUsableAccessTokenByPlaintext, markAccessTokenUsed } from './accessTokens.ts';

// newToken('sk'): the prefix, then 32 random bytes in base64url (43 characters).
const API_KEY_SHAPE = new RegExp(`^${ACCESS_TOKEN_PREFIX}_[A-Za-z0-9_-]{43}$`);

/** Recording every use would be a write per request; a minute's precision is enough for the settings page. */
const LAST_USED_PRECISION_MS = 60_000;

/** Whether a bearer token is shaped like a raw access token (an API key), before any lookup. */
export function looksLikeApiKey(token: string): boolean {
  return API_KEY_SHAPE.test(token);
}

/**
 * The principal of a raw access token presented as `Authorization: Bearer sk_...`: found by the
 * hash of the token (plaintext is never stored), so a deleted key, or one in an org its owner has
 * left, stops working: served from the principal lease for at most PRINCIPAL_CACHE_MS, and deleting
 * the key or leaving the org waits that long before it answers.
 * The security handler (src/http/security.ts) checks the permissions the operation needs.
 */
export async function authenticateApiKey(ctx: AppContext, token: string): Promise<PrincipalOf<'apiKey'> | null> {
  if (!looksLikeApiKey(token)) return null;
  return principalLease(ctx).principal('apiKey', token, () => readApiKeyPrincipal(ctx, token));
}

async function readApiKeyPrincipal(
  ctx: AppContext,
  token: string,
): Promise<{ principal: PrincipalOf<'apiKey'> } | null> {
  const record = await findUsableAccessTokenByPlaintext(ctx, token);
  if (!record) return null;
  const now = Date.now();
  if (record.last_used_at === null || now - record.last_used_at > LAST_USED_PRECISION_MS) {
    // Bookkeeping only: a failed write must not refuse a valid key.
    markAccessTokenUsed(ctx, record.id, now).catch((err: unknown) =>
      ctx.logger.warn({ err }, 'could not record API key use'),
    );
  }
  return {
    // The lease keeps it no longer than the token lives.
    ...(record.expires_at !== null ? { expiresAt: record.expires_at } : {}),
    principal: {
      kind: 'apiKey',
      userId: record.user_id,
      accessTokenId: record.id,
      namespace: record.namespace,
      usageScenario: record.usage_scenario,
      permissions: record.permissions,
    },
  };
}
