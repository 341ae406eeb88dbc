// The token endpoint (RFC 6749 4.1.3 and 6): a form body, client credentials by HTTP Basic when the
// client was made with `basic`, else in the body.
import type { ApiClient, Schemas } from './types.ts';
import type { Result } from './result.ts';

/** `POST /api/open/oauth/token`: exchange an authorization code, or rotate a refresh token. */
export async function requestToken(
  api: ApiClient,
  body: Schemas['TokenRequest'],
  init: { signal?: AbortSignal } = {},
): Promise<Result<Schemas['TokenResponse'], Schemas['OAuthError']>> {
  const { data, error, response } = await api.POST('/api/open/oauth/token', {
    body,
    bodySerializer: (fields: Schemas['TokenRequest']) => formEncode(fields),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    ...init,
  });
  if (error !== undefined) return { error: error as Schemas['OAuthError'], response };
  return { data, response };
}

export function formEncode(fields: Record<string, string | undefined>): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.set(k, v);
  return form.toString();
}
