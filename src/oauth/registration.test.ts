import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { authorizeInBrowser, Browser, createFixture, logIn, PKCE, withPkce } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createApp } from '../accounts/apps.ts';
import { createRegistrationToken, revokeRegistrationToken } from './registrationTokens.ts';
import { countAuthorizedUsers, lastTokenIssuedAt } from './authorizations.ts';

// Dynamic client registration (RFC 7591) and its management (RFC 7592) through the real server,
// on each store: each CLIENT_REGISTRATION mode, every refusal, and a registered public client's
// code flow.

type Info = Record<string, unknown> & {
  client_id: string;
  registration_access_token: string;
  registration_client_uri: string;
  client_secret?: string;
};

const PUBLIC = {
  client_name: 'MCP Client',
  redirect_uris: ['http://localhost:33418/callback'],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  scope: 'workflows:run',
};

function register(server: TestServer, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.baseUrl}/api/open/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  return { status: res.status, error: ((await res.json()) as { error: string }).error };
}

describe.each(testDialects())('client registration (%s)', (dialect) => {
  let open: TestServer;
  beforeAll(async () => {
    open = await startTestServer({
      dialect,
      env: { CLIENT_REGISTRATION: 'open', CLIENT_REGISTRATION_PER_HOUR: '1000' },
    });
  });
  afterAll(() => open?.close());

  it('registers a public client: 201, no secret, the metadata with defaults, and registration_endpoint in both documents', async () => {
    const res = await register(open, { ...PUBLIC, unknown_field: 'ignored' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const info = (await res.json()) as Info;
    expect(info).toMatchObject({
      client_name: 'MCP Client',
      redirect_uris: PUBLIC.redirect_uris,
      token_endpoint_auth_method: 'none',
      grant_types: PUBLIC.grant_types,
      response_types: ['code'],
      scope: 'workflows:run',
      id_token_signed_response_alg: 'RS256',
      registration_client_uri: `${open.baseUrl}/api/open/oauth/register/${info.client_id}`,
    });
    expect(info.client_secret).toBeUndefined();
    expect(info).not.toHaveProperty('unknown_field');
    expect(info.registration_access_token).toMatch(/^rat_/);
    const row = await open.ctx.db('applications').where({ client_id: info.client_id }).first();
    expect(row.registration_access_token_hash).not.toContain(info.registration_access_token);
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const doc = (await (await fetch(`${open.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(doc.registration_endpoint).toBe(`${open.baseUrl}/api/open/oauth/register`);
    }
  });

  it('registers a confidential client by default (client_secret_basic) with a secret that never expires', async () => {
    const res = await register(open, { redirect_uris: ['https://app.example/cb'] });
    expect(res.status).toBe(201);
    const info = (await res.json()) as Info;
    expect(info.token_endpoint_auth_method).toBe('client_secret_basic');
    expect(info.client_secret).toMatch(/^cs_/);
    expect(info.client_secret_expires_at).toBe(0);
  });

  it.each([
    ['http on a non-loopback host', 'http://app.example/cb'],
    ['a fragment', 'https://app.example/cb#x'],
    ['a wildcard', 'https://*.example/cb'],
    ['userinfo', 'https://user:pw@app.example/cb'],
    ['a scheme without a dot', 'myapp:/cb'],
    ['javascript', 'javascript:alert(1)'],
    ['not a URI', 'callback'],
  ])('refuses a redirect URI with %s: invalid_redirect_uri', async (_what, uri) => {
    expect(await errorOf(await register(open, { ...PUBLIC, redirect_uris: [uri] }))).toEqual({
      status: 400,
      error: 'invalid_redirect_uri',
    });
  });

  it('accepts https, loopback http and reverse-domain private-use schemes', async () => {
    const uris = ['https://app.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'com.example.app:/cb'];
    expect((await register(open, { ...PUBLIC, redirect_uris: uris })).status).toBe(201);
  });

  it.each([
    ['an unknown auth method', { token_endpoint_auth_method: 'private_key_jwt' }],
    ['a scope the service does not offer', { scope: 'workflows:run admin' }],
    ['a grant type not offered', { grant_types: ['client_credentials'] }],
    ['a response type other than code', { response_types: ['token'] }],
    ['a non-https client_uri', { client_uri: 'http://app.example' }],
    ['a field of the wrong type', { client_name: 42 }],
  ])('refuses %s: invalid_client_metadata', async (_what, fields) => {
    expect(await errorOf(await register(open, { ...PUBLIC, ...fields }))).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
    });
  });

  it('refuses the code grant without redirect_uris, malformed JSON and an oversized body', async () => {
    expect(await errorOf(await register(open, { token_endpoint_auth_method: 'none' }))).toEqual({
      status: 400,
      error: 'invalid_redirect_uri',
    });
    const malformed = await errorOf(await register(open, '{"redirect_uris": ['));
    expect(malformed.status).toBe(400);
    const big = await register(open, { ...PUBLIC, software_id: 'x'.repeat(2_000_000) });
    expect(big.status).toBe(413);
  });

  it('reads, updates and deletes a registration with its token; another client token is 401', async () => {
    const a = (await (await register(open, PUBLIC)).json()) as Info;
    const b = (await (await register(open, PUBLIC)).json()) as Info;
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });
    const read = await fetch(a.registration_client_uri, { headers: auth(a.registration_access_token) });
    expect(read.status).toBe(200);
    expect(((await read.json()) as Info).client_id).toBe(a.client_id);
    const foreign = await fetch(a.registration_client_uri, { headers: auth(b.registration_access_token) });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get('www-authenticate')).toContain('invalid_token');
    const bare = await fetch(a.registration_client_uri);
    expect(bare.status, await bare.clone().text()).toBe(401);
    const put = (body: unknown) =>
      fetch(a.registration_client_uri, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...auth(a.registration_access_token) },
        body: JSON.stringify(body),
      });
    const updated = await put({ ...PUBLIC, client_id: a.client_id, client_name: 'Renamed' });
    expect(updated.status).toBe(200);
    expect(((await updated.json()) as Info).client_name).toBe('Renamed');
    expect(await errorOf(await put({ ...PUBLIC, client_id: b.client_id }))).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
    });
    const confidential = { ...PUBLIC, client_id: a.client_id, token_endpoint_auth_method: 'client_secret_basic' };
    expect(await errorOf(await put(confidential))).toEqual({ status: 400, error: 'invalid_client_metadata' });
    const gone = await fetch(a.registration_client_uri, {
      method: 'DELETE',
      headers: auth(a.registration_access_token),
    });
    expect(gone.status).toBe(204);
    expect(await open.ctx.db('applications').where({ client_id: a.client_id }).first()).toBeUndefined();
    expect((await fetch(a.registration_client_uri, { headers: auth(a.registration_access_token) })).status).toBe(401);
  });

  it('does not manage a client registered in the console, nor a client_id that names none', async () => {
    const f = await createFixture(open.ctx.db);
    const console = await createApp(open.ctx, {
      ownerUserId: f.userId,
      name: 'Console app',
      description: '',
      homepage: 'https://app.example/',
      redirectUri: 'https://app.example/cb',
    });
    const res = await fetch(`${open.baseUrl}/api/open/oauth/register/${console.app.client_id}`, {
      headers: { authorization: 'Bearer rat_anything' },
    });
    expect(res.status).toBe(401);
    // A client_id that cannot be one, however long, is a client that does not exist: 401 (RFC 7592 2.1).
    const long = `${open.baseUrl}/api/open/oauth/register/${'0'.repeat(3000)}`;
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(long, { method, headers: { authorization: 'Bearer rat_anything' } });
      expect(answer.status, method).toBe(401);
      expect(answer.headers.get('www-authenticate'), method).toContain('invalid_token');
    }
  });

  it('marks a self-registered client on the consent page and in Settings -> Authorized apps, with its client id', async () => {
    const info = (await (
      await register(open, { ...PUBLIC, client_name: 'Look-alike', client_uri: 'https://tool.example/about' })
    ).json()) as Info;
    const f = await createFixture(open.ctx.db);
    const browser = new Browser(open.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const url = withPkce(
      new URL(
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: info.client_id, redirect_uri: PUBLIC.redirect_uris[0]!, scope: 'workflows:run', state: 's' })}`,
        open.baseUrl,
      ),
    );
    const page = await (await browser.fetch(url.toString())).text();
    expect(page).toContain('Registered by itself, not reviewed by OpenAuth.');
    expect(page).toContain(`<code>${info.client_id}</code>`);
    expect(page).toContain('Site: tool.example');
    expect(page).not.toContain('href="https://tool.example/about"');
    expect((await authorizeInBrowser(browser, url)).searchParams.get('code')).toBeTruthy();
    const settings = await (await browser.fetch('/settings/authorizations')).text();
    expect(settings).toContain('Look-alike');
    expect(settings).toContain('self-registered');
    expect(settings).toContain(`<code>${info.client_id}</code>`);
  });

  it('holds a client to the scope it registered, at the authorization and device endpoints (invalid_scope)', async () => {
    const info = (await (
      await register(open, {
        ...PUBLIC,
        grant_types: [...PUBLIC.grant_types, 'urn:ietf:params:oauth:grant-type:device_code'],
      })
    ).json()) as Info;
    const f = await createFixture(open.ctx.db);
    const browser = new Browser(open.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const url = withPkce(
      new URL(
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: info.client_id, redirect_uri: PUBLIC.redirect_uris[0]!, scope: 'workflows:run api_key', state: 's' })}`,
        open.baseUrl,
      ),
    );
    const res = await browser.fetch(url.toString());
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    const device = await fetch(`${open.baseUrl}/api/open/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ scope: 'api_key', client_id: info.client_id }),
    });
    expect(await errorOf(device)).toEqual({ status: 400, error: 'invalid_scope' });
  });

  it("runs a registered public client's code flow, on another loopback port too", async () => {
    const info = (await (await register(open, PUBLIC)).json()) as Info;
    const f = await createFixture(open.ctx.db);
    const browser = new Browser(open.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const redirectUri = 'http://localhost:50123/callback';
    const url = new URL(
      `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: info.client_id, redirect_uri: redirectUri, scope: 'workflows:run', state: 's' })}`,
      open.baseUrl,
    );
    const callback = await authorizeInBrowser(browser, url);
    const code = callback.searchParams.get('code')!;
    const res = await fetch(`${open.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: info.client_id,
        code_verifier: PKCE.verifier,
      }),
    });
    expect(res.status).toBe(200);
    // What the operator's `client list` reads: when a token was last issued, and to how many users.
    const { id } = await open.ctx.db('applications').where({ client_id: info.client_id }).first();
    expect(await lastTokenIssuedAt(open.ctx, Number(id))).toBeGreaterThan(0);
    expect(await countAuthorizedUsers(open.ctx, Number(id))).toBe(1);
  });
});

describe.each(testDialects())('client registration modes (%s)', (dialect) => {
  let off: TestServer;
  let withToken: TestServer;
  beforeAll(async () => {
    off = await startTestServer({ dialect });
    withToken = await startTestServer({
      dialect,
      env: { CLIENT_REGISTRATION: 'initial_access_token', CLIENT_REGISTRATION_PER_HOUR: '5' },
    });
  });
  afterAll(async () => {
    await off?.close();
    await withToken?.close();
  });

  it('answers 403 access_denied when off (the default), and the documents name no registration endpoint', async () => {
    expect(await errorOf(await register(off, PUBLIC))).toEqual({ status: 403, error: 'access_denied' });
    const doc = (await (await fetch(`${off.baseUrl}/.well-known/oauth-authorization-server`)).json()) as object;
    expect(doc).not.toHaveProperty('registration_endpoint');
  });

  it('takes a live initial access token only, and limits registrations per address (429 + Retry-After)', async () => {
    expect(await errorOf(await register(withToken, PUBLIC))).toEqual({ status: 401, error: 'invalid_token' });
    const wrong = await register(withToken, PUBLIC, { authorization: 'Bearer iat_wrong' });
    expect(await errorOf(wrong)).toEqual({ status: 401, error: 'invalid_token' });
    const { id, token } = await createRegistrationToken(withToken.ctx, { label: 'test', expiresAt: null });
    const expired = await createRegistrationToken(withToken.ctx, { label: 'old', expiresAt: Date.now() - 1000 });
    expect((await register(withToken, PUBLIC, { authorization: `Bearer ${expired.token}` })).status).toBe(401);
    expect((await register(withToken, PUBLIC, { authorization: `Bearer ${token}` })).status).toBe(201);
    await revokeRegistrationToken(withToken.ctx, id);
    expect((await register(withToken, PUBLIC, { authorization: `Bearer ${token}` })).status).toBe(401);
    const limited = await register(withToken, PUBLIC, { authorization: `Bearer ${token}` });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
