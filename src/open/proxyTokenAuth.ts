import type { AppContext } from '../context.ts';
import type { PrincipalOf } from '../http/principal.ts';

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/**
 * Verifies a proxy token and that the authorization and raw access token behind it still stand.
 * Proxy tokens are not issued yet (issue 5), so none can verify.
 */
export async function authenticateProxyToken(_ctx: AppContext, _token: string): Promise<PrincipalOf<'proxy'> | null> {
  return null;
}
