// Test helpers for the OAuth flow: a cookie-keeping "browser" over fetch, and the user's side of
// the authorization (log in, consent). The third-party app's side is oauth4webapi, as a real
// integrator would use it.
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import type { Knex } from 'knex';
import { createApp } from '../../src/accounts/apps.ts';
import { createUser } from '../../src/accounts/users.ts';

/** fetch with a cookie jar and manual redirects, like a browser that shows us each hop. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new URL(url, this.baseUrl), { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  post(url: string, fields: Record<string, string> | Array<[string, string]>): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }
}

/** Every hidden input of a page as name and value, in order, a repeated name (`resource`) as often as it comes. */
export function formEntries(page: string): Array<[string, string]> {
  const unescape = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
    m[1]!,
    unescape(m[2]!),
  ]);
}

/** The value of every hidden/text input of the first form of a page (a repeated name: its first value). */
export function formFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of formEntries(page)) fields[name] ??= value;
  return fields;
}

export async function logIn(
  browser: Browser,
  login: string,
  password: string,
  returnTo = '/settings/applications',
): Promise<Response> {
  const page = await (await browser.fetch(`/login?return_to=${encodeURIComponent(returnTo)}`)).text();
  const { csrf_token } = formFields(page);
  return browser.post('/login', { login, password, csrf_token: csrf_token!, return_to: returnTo });
}

export interface Fixture {
  userId: number;
  login: string;
  password: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  appName: string;
}

let counter = 0;
/**
 * A user and an app of theirs; `idTokenAlg`: the app's id_token_signed_response_alg (RS256 unless
 * given); `pkceRequired: false`: the operator exempted it from PKCE (required unless given).
 */
export async function createFixture(
  db: Knex,
  redirectUri = 'https://client.example.test/callback',
  options: { idTokenAlg?: string; pkceRequired?: boolean } = {},
): Promise<Fixture> {
  counter += 1;
  const login = `user${counter}x${Math.floor(Math.random() * 1e6)}`;
  const password = 'correct horse battery';
  const user = await createUser({ db }, { login, password, name: `User ${counter}` });
  const appName = `Demo App ${counter}`;
  const { app, clientSecret } = await createApp(
    { db },
    {
      ownerUserId: user.id,
      name: appName,
      description: 'Reads your profile <for tests>',
      homepage: 'https://client.example.test/',
      redirectUri,
      idTokenAlg: options.idTokenAlg,
      pkceRequired: options.pkceRequired,
    },
  );
  return { userId: user.id, login, password, clientId: app.client_id, clientSecret, redirectUri, appName };
}

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export async function discover(baseUrl: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(baseUrl);
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
}

/**
 * The PKCE pair the helpers use when a test builds its own authorization URL (RFC 7636; the server
 * requires PKCE of every client unless the operator opted it out): authorizeInBrowser adds this
 * challenge to a URL that has none, and the test sends `code_verifier: PKCE.verifier` with the code.
 */
export const PKCE = (() => {
  const verifier = 'test-pkce-verifier-0123456789abcdefghijklmnopqrstuvwxyz';
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url'), method: 'S256' } as const;
})();

/** The URL with the helpers' PKCE challenge, unless it carries a code_challenge already. */
export function withPkce(authorizationUrl: URL | string): URL {
  const url = new URL(authorizationUrl);
  if (!url.searchParams.has('code_challenge')) {
    url.searchParams.set('code_challenge', PKCE.challenge);
    url.searchParams.set('code_challenge_method', PKCE.method);
  }
  return url;
}

/**
 * The user's side: open the authorization URL logged in, answer the consent form, and return the
 * Location the browser is sent to (the client's callback).
 */
export async function authorizeInBrowser(
  browser: Browser,
  authorizationUrl: URL,
  decision: 'allow' | 'deny' = 'allow',
  options: { pkce?: boolean } = {},
): Promise<URL> {
  // A user who granted these scopes before is not asked again (a remembered grant): allowing is
  // then the redirect itself; denying needs the page, which `prompt=consent` brings back.
  const url = options.pkce === false ? new URL(authorizationUrl) : withPkce(authorizationUrl);
  if (decision === 'deny') url.searchParams.set('prompt', 'consent');
  const consent = await browser.fetch(url.toString());
  const location = consent.headers.get('location');
  if (consent.status === 302 && location && new URL(location, url).searchParams.has('code')) return new URL(location);
  if (consent.status !== 200)
    throw new Error(`expected the consent page, got ${consent.status} ${consent.headers.get('location') ?? ''}`);
  // The consent form's fields (the page's other forms repeat csrf_token), and every `resource` (RFC 8707).
  const page = await consent.text();
  const fields = Object.entries(formFields(page)).filter(([name]) => name !== 'resource');
  const resources = formEntries(page).filter(([name]) => name === 'resource');
  const answer = await browser.post('/oauth/authorize/decision', [...fields, ...resources, ['decision', decision]]);
  if (answer.status !== 303) throw new Error(`expected a redirect, got ${answer.status}`);
  return new URL(answer.headers.get('location')!);
}

/**
 * The whole authorization-code flow as a third-party app runs it with oauth4webapi (PKCE, state):
 * the user logs in and allows `scope`; the app exchanges the code. Returns the token response and
 * the user's logged-in browser (for the settings pages).
 */
export async function obtainTokens(
  baseUrl: string,
  as: oauth.AuthorizationServer,
  f: Fixture,
  scope: string,
  options: { resource?: string } = {},
): Promise<{ browser: Browser; tokens: oauth.TokenEndpointResponse }> {
  const browser = new Browser(baseUrl);
  const login = await logIn(browser, f.login, f.password);
  if (login.status !== 303) throw new Error(`login failed with ${login.status}`);
  const state = oauth.generateRandomState();
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: f.clientId,
    redirect_uri: f.redirectUri,
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    // RFC 8707: what an MCP client sends, at both endpoints.
    ...(options.resource === undefined ? {} : { resource: options.resource }),
  }).toString();
  const callback = await authorizeInBrowser(browser, url);
  const client = { client_id: f.clientId };
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(f.clientSecret),
    params,
    f.redirectUri,
    verifier,
    options.resource === undefined ? insecure : { ...insecure, additionalParameters: { resource: options.resource } },
  );
  return { browser, tokens: await oauth.processAuthorizationCodeResponse(as, client, response) };
}
