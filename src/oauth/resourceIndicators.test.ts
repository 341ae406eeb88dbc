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

// Resource indicators (RFC 8707) and protected resource metadata (RFC 9728) end to end: a real
// server and database; the client's side as raw requests, the user's with a cookie jar. What the MCP
// server makes of a token's audience is in src/mcp/mcp.test.ts.

type Json = Record<string, unknown>;
const form = (fields: Record<string, string> | URLSearchParams) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

describe.each(testDialects())('resource indicators and protected resource metadata (%s)', (dialect) => {
  let server: TestServer;
  let f: Fixture;
  let browser: Browser;
  let open: string;
  let workflows: string;
  let mcp: string;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    f = await createFixture(server.ctx.db);
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    open = `${server.baseUrl}/api/open`;
    workflows = `${server.baseUrl}/api/workflows`;
    mcp = `${server.baseUrl}/mcp`;
  });
  afterAll(() => server?.close());

  /** An authorization request with these `resource` parameters, allowed by the user: the callback URL. */
  async function authorize(resources: string[], scope = 'user_info workflows:read workflows:run'): Promise<URL> {
    const url = new URL('/oauth/authorize', server.baseUrl);
    url.search = new URLSearchParams([
      ['response_type', 'code'],
      ['client_id', f.clientId],
      ['redirect_uri', f.redirectUri],
      ['scope', scope],
      ['state', 'st-aud'],
      ['prompt', 'consent'],
      ...resources.map((r) => ['resource', r]),
    ]).toString();
    return authorizeInBrowser(browser, url);
  }

  const token = async (fields: Record<string, string>) => {
    const res = await fetch(
      `${server.baseUrl}/api/open/oauth/token`,
      form({ ...fields, client_id: f.clientId, client_secret: f.clientSecret }),
    );
    return { status: res.status, body: (await res.json()) as Json };
  };

  const exchange = (code: string, more: Record<string, string> = {}) =>
    token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: f.redirectUri,
      code_verifier: PKCE.verifier,
      ...more,
    });

  async function pairFor(resources: string[], more: Record<string, string> = {}) {
    const code = (await authorize(resources)).searchParams.get('code')!;
    const answer = await exchange(code, more);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as { access_token: string; refresh_token: string };
  }

  const introspect = async (t: string) => {
    const res = await fetch(
      `${server.baseUrl}/api/open/oauth/introspect`,
      form({ token: t, client_id: f.clientId, client_secret: f.clientSecret }),
    );
    return (await res.json()) as Json;
  };

  /** The status of a GET of the open API's user info and the workflows API's list with this token. */
  const statusAt = async (accessToken: string) => {
    const headers = { authorization: `Bearer ${accessToken}` };
    return {
      open: (await fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers })).status,
      workflows: (await fetch(`${server.baseUrl}/api/workflows`, { headers })).status,
    };
  };

  it("publishes each resource's metadata at the path-aware well-known URL, its resource the URL a client derives (RFC 9728 3)", async () => {
    const scopes = {
      '/api/open': ['user_info', 'api_key'],
      '/api/workflows': ['workflows:read'],
      '/mcp': ['workflows:run'],
    };
    for (const [path, scopesSupported] of Object.entries(scopes)) {
      const url = `${server.baseUrl}/.well-known/oauth-protected-resource${path}`;
      const res = await fetch(url);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      const metadata = (await res.json()) as Json;
      // 3.3: the resource is the metadata URL with the well-known part taken out.
      expect(metadata.resource).toBe(url.replace('/.well-known/oauth-protected-resource', ''));
      expect(metadata).toMatchObject({
        authorization_servers: [server.baseUrl],
        scopes_supported: scopesSupported,
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'RS256', 'PS256'],
        resource_documentation: `${server.baseUrl}/docs`,
      });
      expect(typeof metadata.resource_name).toBe('string');
    }
    // The authorization server it names publishes its own metadata, with itself as the issuer.
    const as = (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Json;
    expect(as.issuer).toBe(server.baseUrl);
    // The host itself is no resource: no document at the bare well-known URL, nor for other paths.
    expect((await fetch(`${server.baseUrl}/.well-known/oauth-protected-resource`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/.well-known/oauth-protected-resource/serverless`)).status).toBe(404);
  });

  it("names the resource's metadata in every 401 challenge of its OAuth operations (RFC 9728 5.1)", async () => {
    const cases = [
      ['/api/open/v1/userinfo', '/api/open'],
      ['/api/open/v1/orgs', '/api/open'],
      ['/api/workflows', '/api/workflows'],
    ] as const;
    for (const [path, resource] of cases) {
      for (const authorization of [undefined, 'Bearer gho_not-a-token']) {
        const res = await fetch(`${server.baseUrl}${path}`, {
          headers: authorization ? { authorization } : {},
        });
        expect(res.status, path).toBe(401);
        expect(res.headers.get('www-authenticate'), path).toMatch(/^Bearer /);
        expect(res.headers.get('www-authenticate'), path).toContain(
          `resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource${resource}"`,
        );
      }
    }
    // An operation that takes API keys only has no OAuth resource to point at.
    const keyOnly = await fetch(`${server.baseUrl}/api/workflows`, { method: 'POST' });
    expect(keyOnly.status).toBe(401);
    expect(keyOnly.headers.get('www-authenticate')).not.toContain('resource_metadata');
  });

  it('issues a token for the one resource asked at the token endpoint, and refuses it at the others', async () => {
    const { access_token } = await pairFor([open, workflows], { resource: workflows });
    expect(await statusAt(access_token)).toEqual({ open: 401, workflows: 200 });
    const refused = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(refused.headers.get('www-authenticate')).toMatch(/the token was issued for another resource/);
    expect(await refused.json()).toMatchObject({ code: 'invalid_access_token' });
    expect(await introspect(access_token)).toMatchObject({ active: true, aud: workflows });
  });

  it('without resource at the token endpoint, the access token is for every resource authorized; none named, for no one in particular', async () => {
    const both = await pairFor([open, workflows]);
    expect(await statusAt(both.access_token)).toEqual({ open: 200, workflows: 200 });
    // Two resources: no single `aud` to answer in the contract's string.
    expect((await introspect(both.access_token)).aud).toBeUndefined();

    const unnamed = await pairFor([]);
    expect(await statusAt(unnamed.access_token)).toEqual({ open: 200, workflows: 200 });
    expect((await introspect(unnamed.access_token)).aud).toBeUndefined();

    const one = await pairFor([mcp]);
    expect(await statusAt(one.access_token)).toEqual({ open: 401, workflows: 401 });
    expect(await introspect(one.access_token)).toMatchObject({ active: true, aud: mcp });
  });

  it('refuses to exchange a subject token issued for another resource than the open API (RFC 8693)', async () => {
    const code = (await authorize([mcp], 'api_key workflows:run')).searchParams.get('code')!;
    const forMcp = await exchange(code);
    expect(forMcp.status, JSON.stringify(forMcp.body)).toBe(200);
    const exchanged = await token({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: forMcp.body.access_token as string,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: `${open}/v1/${f.login}/tokens/1`,
    });
    expect(exchanged.status).toBe(400);
    expect(exchanged.body).toMatchObject({ error: 'invalid_grant' });
    expect(exchanged.body.error_description).toMatch(/issued for another resource/);
  });

  it("downscopes on refresh to one of the grant's resources; the refresh token keeps them all", async () => {
    const pair = await pairFor([open, workflows]);
    const narrowed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token, resource: open });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    expect(await statusAt(narrowed.body.access_token as string)).toEqual({ open: 200, workflows: 401 });

    // Not one of the grant's: invalid_target, and the refresh token is still good.
    const outside = await token({
      grant_type: 'refresh_token',
      refresh_token: narrowed.body.refresh_token as string,
      resource: mcp,
    });
    expect(outside).toMatchObject({ status: 400, body: { error: 'invalid_target' } });

    const whole = await token({ grant_type: 'refresh_token', refresh_token: narrowed.body.refresh_token as string });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect(await statusAt(whole.body.access_token as string)).toEqual({ open: 200, workflows: 200 });
  });

  it('answers invalid_target for a resource that is not one of ours, at every endpoint', async () => {
    const elsewhere = ['https://elsewhere.example/api', `${mcp}#fragment`, '/mcp', `${server.baseUrl}/serverless`];
    for (const resource of elsewhere) {
      // The authorization endpoint redirects the error to the client (RFC 8707 2).
      const url = new URL('/oauth/authorize', server.baseUrl);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: f.clientId,
        redirect_uri: f.redirectUri,
        scope: 'user_info',
        state: 'st-bad',
        code_challenge: PKCE.challenge,
        code_challenge_method: 'S256',
        resource,
      }).toString();
      const res = await browser.fetch(url.toString());
      expect(res.status, resource).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(f.redirectUri);
      expect(location.searchParams.get('error'), resource).toBe('invalid_target');
      expect(location.searchParams.get('state')).toBe('st-bad');

      // Pushed and device authorization requests answer it as the token endpoint does (400 JSON).
      const pushed = await fetch(
        `${server.baseUrl}/api/open/oauth/par`,
        form({
          response_type: 'code',
          redirect_uri: f.redirectUri,
          scope: 'user_info',
          code_challenge: PKCE.challenge,
          code_challenge_method: 'S256',
          resource,
          client_id: f.clientId,
          client_secret: f.clientSecret,
        }),
      );
      expect(pushed.status, resource).toBe(400);
      expect(await pushed.json()).toMatchObject({ error: 'invalid_target' });
      const device = await fetch(
        `${server.baseUrl}/api/open/oauth/device_authorization`,
        form({ scope: 'user_info', resource, client_id: f.clientId, client_secret: f.clientSecret }),
      );
      expect(device.status, resource).toBe(400);
      expect(await device.json()).toMatchObject({ error: 'invalid_target' });
    }

    // The token endpoint: a resource the code was not authorized for, or not ours at all.
    for (const resource of [mcp, 'https://elsewhere.example/api']) {
      const code = (await authorize([open])).searchParams.get('code')!;
      expect(await exchange(code, { resource })).toMatchObject({ status: 400, body: { error: 'invalid_target' } });
    }
  });

  it('carries the resource of a pushed authorization request to the token (RFC 9126)', async () => {
    const pushed = await fetch(
      `${server.baseUrl}/api/open/oauth/par`,
      form({
        response_type: 'code',
        redirect_uri: f.redirectUri,
        scope: 'user_info workflows:read',
        state: 'st-par',
        prompt: 'consent',
        code_challenge: PKCE.challenge,
        code_challenge_method: 'S256',
        resource: workflows,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    );
    expect(pushed.status).toBe(201);
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const page = await browser.fetch(`/oauth/authorize?${new URLSearchParams({ client_id: f.clientId, request_uri })}`);
    const fields = formFields(await page.text());
    const answer = await browser.post('/oauth/authorize/decision', { ...fields, decision: 'allow' });
    expect(answer.status).toBe(303);
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
    const pair = await exchange(code);
    expect(pair.status, JSON.stringify(pair.body)).toBe(200);
    expect(await statusAt(pair.body.access_token as string)).toEqual({ open: 401, workflows: 200 });
  });

  it('carries the resource of a device authorization request to the token (RFC 8628)', async () => {
    const started = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ scope: 'user_info', resource: open, client_id: f.clientId, client_secret: f.clientSecret }),
    );
    expect(started.status).toBe(200);
    const { device_code, user_code } = (await started.json()) as { device_code: string; user_code: string };
    const entry = await (await browser.fetch('/device')).text();
    const consent = await browser.post('/device', { user_code, csrf_token: formFields(entry).csrf_token! });
    expect(consent.status).toBe(200);
    const done = await browser.post('/device/decision', { ...formFields(await consent.text()), decision: 'allow' });
    expect(done.status).toBe(200);
    const grant = 'urn:ietf:params:oauth:grant-type:device_code';
    // Another resource than the request's: invalid_target, and the code is not used up by it.
    const other = await token({ grant_type: grant, device_code, resource: workflows });
    expect(other).toMatchObject({ status: 400, body: { error: 'invalid_target' } });
    const pair = await token({ grant_type: grant, device_code });
    expect(pair.status, JSON.stringify(pair.body)).toBe(200);
    expect(await statusAt(pair.body.access_token as string)).toEqual({ open: 200, workflows: 401 });
    expect(await introspect(pair.body.access_token as string)).toMatchObject({ aud: open });
  });
});
