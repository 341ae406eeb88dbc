import { invalidField } from '../shared/errors.ts';

/** Logins and org namespaces share one name space and one rule (GitHub's): 1-39 letters, digits, inner hyphens. */
const NAME_RULE = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/;

/**
 * Names are case-insensitive and stored in lower case, so `Alice` and `alice` are one namespace; the
 * database compares exactly on both dialects (migration 0004), the folding is done here.
 */
export function canonicalName(value: string): string {
  return value.trim().toLowerCase();
}

export function checkNamespaceName(field: string, value: string): string {
  const name = canonicalName(value);
  if (name.length < 1 || name.length > 39 || !NAME_RULE.test(name)) {
    throw invalidField(
      `${field} must be 1-39 letters, digits or inner hyphens (got "${value}").`,
      `/${field}`,
      'must be 1-39 letters, digits or single inner hyphens, starting and ending with a letter or digit',
    );
  }
  return name;
}

export function checkText(field: string, value: string | undefined, options: { min?: number; max: number }): string {
  const text = (value ?? '').trim();
  const min = options.min ?? 1;
  if (text.length < min || text.length > options.max) {
    const rule = min > 0 ? `${min}-${options.max} characters` : `at most ${options.max} characters`;
    throw invalidField(`${field} must be ${rule}.`, `/${field}`, `must be ${rule}`);
  }
  return text;
}

/** An absolute http(s) URL without a fragment (RFC 6749 3.1.2 forbids fragments in redirect URIs). */
export function checkHttpUrl(field: string, value: string | undefined): string {
  const text = (value ?? '').trim();
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || text.includes('#') || text.length > 2048) {
    throw invalidField(
      `${field} must be an absolute http(s) URL without a fragment (got "${text}").`,
      `/${field}`,
      'must be an absolute http(s) URL without a fragment',
    );
  }
  return text;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A redirect URI: an absolute URL without a fragment, https except on a loopback host, where a
 * native or development client listens (RFC 8252 7.3). A plain-http callback elsewhere would carry
 * the authorization code in clear over the network (RFC 6749 3.1.2.1, RFC 9700 2.1).
 */
export function checkRedirectUri(field: string, value: string | undefined): string {
  const text = checkHttpUrl(field, value);
  // RFC 3986 3.2.1 userinfo (`user:pw@`, even an empty `@`) has no place in a callback: it puts a
  // credential in every authorization response's Location and lets `https://trusted@evil/` read as
  // trusted (RFC 9700 4.1.1; OAuth 2.1 2.3.1 compares redirect URIs as exact strings). The value
  // is not echoed: it may hold a password.
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(text)) {
    throw invalidField(
      `${field} must not contain a user name or password (user:password@ before the host).`,
      `/${field}`,
      'must not contain a user name or password (user:password@)',
    );
  }
  const url = new URL(text);
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw invalidField(
      `${field} must use https; plain http only for a loopback host (localhost, 127.0.0.1, [::1]) (got "${text}").`,
      `/${field}`,
      'must use https (plain http only for localhost, 127.0.0.1 or [::1])',
    );
  }
  return text;
}

/** The algorithms an application may choose for its OpenID Connect ID tokens (id_token_signed_response_alg). */
export const ID_TOKEN_ALGS = ['RS256', 'ES256'] as const;

/** `RS256` or `ES256` (any case, as typed), in its registered spelling. */
export function checkIdTokenAlg(field: string, value: string): string {
  const alg = value.trim().toUpperCase();
  if (!(ID_TOKEN_ALGS as readonly string[]).includes(alg)) {
    throw invalidField(
      `${field} must be ${ID_TOKEN_ALGS.join(' or ')} (got "${value}").`,
      `/${field}`,
      `must be ${ID_TOKEN_ALGS.join(' or ')}`,
    );
  }
  return alg;
}

/** Any URI our responses can carry as `format: uri` (http(s) or data:). */
export function checkAvatarUrl(field: string, value: string): string {
  const text = value.trim();
  if (text.startsWith('data:image/') && text.length <= 2048) return text;
  return checkHttpUrl(field, text);
}
