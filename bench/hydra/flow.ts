// A real authorization-code flow through Hydra, as a browser and a login/consent app would drive
// it: the browser (a cookie jar) follows Hydra's redirects, and the bench plays the login and
// consent app by accepting each challenge through Hydra's admin API.
import { randomBytes } from 'node:crypto';
import { Browser } from '../../test/support/oauthFlow.ts';
import { fromLocation } from './config.ts';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SUBJECT = 'user-1';

export interface HydraClient {
  clientId: string;
  clientSecret: string;
}

export interface HydraUrls {
  publicUrl: string;
  adminUrl: string;
}

async function json<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`Hydra ${what}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** One confidential client, authenticated as ours and oidc-provider's are (client_secret_basic). */
export async function createClient(adminUrl: string): Promise<HydraClient> {
  const clientSecret = randomBytes(24).toString('hex');
  const res = await fetch(`${adminUrl}/admin/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'bench',
      client_secret: clientSecret,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid offline_access profile',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_basic',
    }),
  });
  const created = await json<{ client_id: string }>(res, 'client creation');
  return { clientId: created.client_id, clientSecret };
}

/** Accepts a login or consent challenge through the admin API: where Hydra sends the browser next. */
async function accept(adminUrl: string, kind: 'login' | 'consent', challenge: string, body: object): Promise<string> {
  const url = `${adminUrl}/admin/oauth2/auth/requests/${kind}/accept?${kind}_challenge=${encodeURIComponent(challenge)}`;
  const res = await fetch(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await json<{ redirect_to: string }>(res, `${kind} accept`)).redirect_to;
}

/** The browser's next hop: the Location of a redirect it was sent to. */
async function follow(browser: Browser, url: string): Promise<string | null> {
  const res = await browser.fetch(url);
  await res.arrayBuffer();
  if (res.status < 300 || res.status >= 400)
    throw new Error(`Hydra answered ${res.status} at ${new URL(url).pathname}, expected a redirect`);
  return res.headers.get('location');
}

/**
 * Authorize → login accepted → consent accepted (scope granted, the user's claims in the ID token
 * session, which Hydra's /userinfo answers) → code → token. A new browser per flow: Hydra's CSRF
 * cookies belong to one flow.
 */
export async function mintTokens(
  urls: HydraUrls,
  client: HydraClient,
  scope: string,
): Promise<{ access_token: string; refresh_token?: string }> {
  const browser = new Browser(urls.publicUrl);
  const authorize = new URL('/oauth2/auth', urls.publicUrl);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state: randomBytes(8).toString('hex'),
  }).toString();
  const login = fromLocation(await follow(browser, authorize.toString()), 'login_challenge');
  const afterLogin = await accept(urls.adminUrl, 'login', login, { subject: SUBJECT, remember: false });
  const consent = fromLocation(await follow(browser, afterLogin), 'consent_challenge');
  const afterConsent = await accept(urls.adminUrl, 'consent', consent, {
    grant_scope: scope.split(' '),
    remember: false,
    session: { id_token: { name: 'Bench User', preferred_username: 'bench' } },
  });
  const code = fromLocation(await follow(browser, afterConsent), 'code');
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`;
  const res = await fetch(`${urls.publicUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }).toString(),
  });
  return json(res, 'code exchange');
}
