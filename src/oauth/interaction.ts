import { AuthorizeRedirectError } from '../shared/errors.ts';
import { authTimeOf, loginUrl, type WebSession } from '../accounts/session.ts';
import type { AuthorizeRequest } from './authorize.ts';

// Which page a valid authorization request needs before a code is issued (OpenID Connect Core
// 3.1.2.3-3.1.2.4): the login page (no session, `prompt=login`, or a login older than `max_age`),
// the consent page (no standing grant covers the scopes, or `prompt=consent`), or none. With
// `prompt=none` a needed page is an error redirect instead (3.1.2.6).

/** Whether the user must log in (again) first; with prompt=none, login_required instead. */
export function mustLogIn(
  request: AuthorizeRequest,
  session: WebSession | undefined,
  signedIn: boolean,
  nowMs = Date.now(),
): boolean {
  // max_age=0 is prompt=login (3.1.2.1): a login made this very second is not older than 0 s.
  const stale =
    signedIn &&
    request.maxAge !== undefined &&
    (request.maxAge === 0 || Math.floor(nowMs / 1000) - authTimeOf(session!) > request.maxAge);
  const needed = !signedIn || request.prompt.has('login') || stale;
  if (needed && request.prompt.has('none')) {
    throw new AuthorizeRedirectError(
      'login_required',
      signedIn ? 'The login is older than max_age.' : 'The user is not logged in.',
    );
  }
  return needed;
}

/** With prompt=none, a request that would show the consent page answers consent_required. */
export function consentNeeded(request: AuthorizeRequest): void {
  if (request.prompt.has('none'))
    throw new AuthorizeRedirectError('consent_required', 'The user has not granted these scopes to the application.');
}

/**
 * The login page for this request, coming back to it without `prompt=login` and `max_age`: the
 * login just made satisfies both (otherwise `max_age=0` would send the user round forever). A
 * signed-in user sees the login form all the same. Dropping them gains a user nothing over an
 * authorization request of their own making, and the ID token's auth_time always tells the truth:
 * a client that asked for a fresh login compares it (openid-client does for max_age).
 */
export function loginPage(originalUrl: string, signedIn: boolean): string {
  const url = new URL(originalUrl, 'http://service.invalid');
  const prompt = (url.searchParams.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login');
  url.searchParams.delete('max_age');
  if (prompt.length) url.searchParams.set('prompt', prompt.join(' '));
  else url.searchParams.delete('prompt');
  return loginUrl(`${url.pathname}${url.search}`, signedIn);
}
