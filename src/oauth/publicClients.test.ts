import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  formFields,
  logIn,
  PKCE,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createRegisteredApp } from '../accounts/apps.ts';
import { dpopKey, dpopProof } from '../../test/support/dpopProof.ts';

// Public clients (RFC 6749 2.1; token_endpoint_auth_method `none`): the client_id alone
// authenticates them at the token, revocation and device authorization endpoints, PKCE is always
// required of them, a secret sent for one is invalid_client, and introspection stays closed to
// them (it needs client authentication). Through the real server, on each store.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CALLBACK = 'http://127.0.0.1:8123/callback';

describe.each(testDialects())('public clients (%s)', (dialect) => {
  let server: TestServer;
  let user: Fixture;
  let browser: Browser;
  let clientId: string;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
    user = await createFixture(server.ctx.db);
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, user.login, user.password)).status).toBe(303);
    const { app, clientSecret } = await createRegisteredApp(server.ctx, {
      kind: 'dynamic',
      name: 'Native Tool',
      homepage: 'https://tool.example/',
      redirectUris: [CALLBACK, 'com.example.tool:/callback'],
      tokenEndpointAuthMethod: 'none',
      idTokenAlg: 'RS256',
      metadata: {},
      registrationAccessTokenHash: null,
    });
    expect(clientSecret).toBeNull();
    clientId = app.client_id;
  });
  afterAll(() => server?.close());

  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });

  const authorizationUrl = (params: Record<string, string> = {}) =>
    new URL(
      `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CALLBACK, scope: 'user_info', state: 's', ...params })}`,
      server.baseUrl,
    );

  async function code(redirectUri = CALLBACK): Promise<string> {
    const callback = await authorizeInBrowser(browser, authorizationUrl({ redirect_uri: redirectUri }));
    const got = callback.searchParams.get('code');
    expect(got, callback.toString()).toBeTruthy();
    return got!;
  }

  const exchange = (c: string, more: Record<string, string> = {}) =>
    post('/api/open/oauth/token', {
      grant_type: 'authorization_code',
      code: c,
      redirect_uri: CALLBACK,
      client_id: clientId,
      code_verifier: PKCE.verifier,
      ...more,
    });

  it('runs the code flow with PKCE and its client_id alone, and rotates its refresh token with its client_id alone', async () => {
    const res = await exchange(await code());
    expect(res.status).toBe(200);
    const pair = (await res.json()) as { access_token: string; refresh_token: string };
    expect(pair.refresh_token).toBeTruthy();
    const refreshed = await post('/api/open/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: pair.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as { refresh_token: string };
    expect(next.refresh_token).not.toBe(pair.refresh_token);
    // Revocation with the client_id alone (RFC 7009 2.1).
    expect((await post('/api/open/oauth/revoke', { token: next.refresh_token, client_id: clientId })).status).toBe(200);
    const after = await post('/api/open/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token,
      client_id: clientId,
    });
    expect(after.status).toBe(400);
  });

  it('gets DPoP-bound access and refresh tokens with its client_id alone, at the code exchange and at each refresh', async () => {
    const key = await dpopKey();
    const url = `${server.baseUrl}/api/open/oauth/token`;
    const withProof = async (fields: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          DPoP: await dpopProof(key, { htm: 'POST', htu: url }),
        },
        body: new URLSearchParams(fields),
      });
    const first = await withProof({
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: CALLBACK,
      client_id: clientId,
      code_verifier: PKCE.verifier,
    });
    expect(first.status).toBe(200);
    const pair = (await first.json()) as { token_type: string; refresh_token: string };
    expect(pair.token_type).toBe('DPoP');
    const next = await withProof({
      grant_type: 'refresh_token',
      refresh_token: pair.refresh_token,
      client_id: clientId,
    });
    expect(next.status).toBe(200);
    const rotated = (await next.json()) as { token_type: string; refresh_token: string };
    expect(rotated.token_type).toBe('DPoP');
    // Its refresh token is bound to that key too (RFC 9449 5): refused without a proof of it, or
    // with another key's, and still good afterwards with the right one (nothing was revoked).
    const refresh = { grant_type: 'refresh_token', refresh_token: rotated.refresh_token, client_id: clientId };
    const bare = await post('/api/open/oauth/token', refresh);
    expect(bare.status).toBe(400);
    expect(await bare.json()).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/DPoP key/),
    });
    const otherKey = await dpopKey();
    const foreign = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        DPoP: await dpopProof(otherKey, { htm: 'POST', htu: url }),
      },
      body: new URLSearchParams(refresh),
    });
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as { error: string }).error).toBe('invalid_grant');
    const good = await withProof(refresh);
    expect(good.status).toBe(200);
    expect(((await good.json()) as { token_type: string }).token_type).toBe('DPoP');
  });

  it('refuses a secret sent for it (invalid_client), and a code request without PKCE', async () => {
    const res = await exchange(await code(), { client_secret: 'cs_guess' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    const answer = await browser.fetch(authorizationUrl().toString());
    expect(answer.status).toBe(302);
    const noPkce = new URL(answer.headers.get('location')!);
    expect(noPkce.searchParams.get('error')).toBe('invalid_request');
    expect(noPkce.searchParams.get('code')).toBeNull();
  });

  it('accepts its loopback redirect URI on another port (RFC 8252 7.3), and nothing else', async () => {
    const other = 'http://127.0.0.1:49152/callback';
    const res = await exchange(await code(other), { redirect_uri: other });
    expect(res.status).toBe(200);
    const refused = await browser.fetch(
      withChallenge(authorizationUrl({ redirect_uri: 'http://127.0.0.1:49152/elsewhere' })).toString(),
    );
    expect(refused.status).toBe(400);
  });

  it('is refused at introspection, which needs client authentication', async () => {
    const res = await post('/api/open/oauth/introspect', { token: 'whatever', client_id: clientId });
    expect(res.status).toBe(401);
  });

  it('runs the device flow with its client_id alone', async () => {
    const start = await post('/api/open/oauth/device_authorization', { scope: 'user_info', client_id: clientId });
    expect(start.status).toBe(200);
    const { device_code, user_code } = (await start.json()) as { device_code: string; user_code: string };
    const device = new Browser(server.baseUrl);
    expect((await logIn(device, user.login, user.password, '/device')).status).toBe(303);
    const entry = await (await device.fetch('/device')).text();
    const consent = await device.post('/device', { user_code, csrf_token: formFields(entry).csrf_token! });
    expect(consent.status).toBe(200);
    const done = await device.post('/device/decision', { ...formFields(await consent.text()), decision: 'allow' });
    expect(done.status).toBeLessThan(400);
    const res = await post('/api/open/oauth/token', { grant_type: DEVICE_GRANT, device_code, client_id: clientId });
    expect(res.status).toBe(200);
  });

  it('leaves a confidential client without its secret invalid_client, as before', async () => {
    const f = await createFixture(server.ctx.db);
    const res = await post('/api/open/oauth/token', {
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: f.redirectUri,
      client_id: f.clientId,
      code_verifier: PKCE.verifier,
    });
    expect(res.status).toBe(401);
    const device = await post('/api/open/oauth/device_authorization', { scope: 'user_info', client_id: f.clientId });
    expect(device.status).toBe(401);
  });
});

function withChallenge(url: URL): URL {
  url.searchParams.set('code_challenge', PKCE.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url;
}
