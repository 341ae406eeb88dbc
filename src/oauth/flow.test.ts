import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../shared/crypto.ts';
import { testDialects } from '../../test/support/db.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  discover,
  formFields,
  insecure,
  logIn,
  PKCE,
  withPkce,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// The authorization-code flow end to end: a real HTTP server and database, the user's side driven
// through the pages with a cookie jar, the third-party app's side with oauth4webapi.

describe.each(testDialects())('OAuth authorization-code flow (%s)', (dialect) => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    as = await discover(server.baseUrl);
  });
  afterAll(() => server?.close());

  async function loggedIn(f: Fixture): Promise<Browser> {
    const browser = new Browser(server.baseUrl);
    const res = await logIn(browser, f.login, f.password);
    expect(res.status).toBe(303);
    return browser;
  }

  function authorizationUrl(f: Fixture, params: Record<string, string> = {}): URL {
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info',
      ...params,
    }).toString();
    return withPkce(url); // the helpers' challenge unless params bring one: exchange with PKCE.verifier
  }

  /** Runs the flow up to the token response (body client auth unless given). */
  async function obtainTokens(f: Fixture, options: { scope?: string; auth?: oauth.ClientAuth } = {}) {
    const browser = await loggedIn(f);
    const state = oauth.generateRandomState();
    const verifier = oauth.generateRandomCodeVerifier();
    const callback = await authorizeInBrowser(
      browser,
      authorizationUrl(f, {
        scope: options.scope ?? 'user_info',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
    );
    const client = { client_id: f.clientId };
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      options.auth ?? oauth.ClientSecretPost(f.clientSecret),
      params,
      f.redirectUri,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    return { browser, tokens, client, code: params.get('code')!, verifier };
  }

  const userinfo = (token: string) =>
    fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });

  async function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(as.token_endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields),
    });
  }

  it('publishes RFC 8414 metadata a standard client configures itself from', () => {
    expect(as.issuer).toBe(server.baseUrl);
    expect(as.token_endpoint).toBe(`${server.baseUrl}/api/open/oauth/token`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
  });

  it('runs the whole flow with client_secret_post: code, tokens, then userinfo {id, login, name, avatar_url} and sub (the id as a string) exactly', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f);
    expect(tokens.token_type).toBe('bearer'); // oauth4webapi lower-cases it
    expect(tokens.expires_in).toBe(7200);
    expect(tokens.scope).toBe('user_info');
    expect(tokens.access_token).toMatch(/^gho_/);
    expect(tokens.refresh_token).toMatch(/^ghr_/);

    const res = await userinfo(tokens.access_token);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['avatar_url', 'id', 'login', 'name', 'sub']);
    expect(body).toMatchObject({ sub: String(f.userId), id: f.userId, login: f.login, name: expect.any(String) });

    const orgs = await fetch(`${server.baseUrl}/api/open/v1/orgs`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(orgs.status).toBe(200);
    expect(await orgs.json()).toEqual([]);
  });

  it('accepts client credentials in an HTTP Basic header (client_secret_basic)', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f, { auth: oauth.ClientSecretBasic(f.clientSecret) });
    expect((await userinfo(tokens.access_token)).status).toBe(200);
  });

  it('answers the token request with token_type Bearer, expires_in 7200 and Cache-Control: no-store', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(browser, authorizationUrl(f, { state: 's1' }));
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: f.redirectUri,
      code_verifier: PKCE.verifier,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'user_info' });
  });

  it('returns state unchanged, and the client library rejects a callback whose state differs or is missing', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const state = 'a b&c=d/é';
    const callback = await authorizeInBrowser(browser, authorizationUrl(f, { state }));
    expect(callback.origin + callback.pathname).toBe(f.redirectUri);
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('code')).toMatch(/^oac_/);
    const client = { client_id: f.clientId };
    expect(() => oauth.validateAuthResponse(as, client, callback, 'another-state')).toThrow(/state/i);
    const withoutState = new URL(callback);
    withoutState.searchParams.delete('state');
    expect(() => oauth.validateAuthResponse(as, client, withoutState, state)).toThrow(/state/i);
  });

  it('rotates the refresh token on every use; the old one stops working', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens, client } = await obtainTokens(f);
    const auth = oauth.ClientSecretPost(f.clientSecret);
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure),
    );
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect(second.access_token).not.toBe(tokens.access_token);
    expect(second.expires_in).toBe(7200);
    expect((await userinfo(second.access_token)).status).toBe(200);
    const third = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(f.clientSecret),
        second.refresh_token!,
        insecure,
      ),
    );
    expect((await userinfo(third.access_token)).status).toBe(200);
  });

  it('keeps a refresh token usable after a refused refresh (wider scope, wrong secret, another client)', async () => {
    const f = await createFixture(server.ctx.db);
    const other = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f);
    const refresh = (fields: Record<string, string>) =>
      tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: f.clientId,
        client_secret: f.clientSecret,
        ...fields,
      });
    const widened = await refresh({ scope: 'user_info api_key' });
    expect([widened.status, (await widened.json()).error]).toEqual([400, 'invalid_scope']);
    const wrongSecret = await refresh({ client_secret: other.clientSecret });
    expect([wrongSecret.status, (await wrongSecret.json()).error]).toEqual([401, 'invalid_client']);
    const foreign = await refresh({ client_id: other.clientId, client_secret: other.clientSecret });
    expect([foreign.status, (await foreign.json()).error]).toEqual([400, 'invalid_grant']);
    const good = await refresh({});
    expect(good.status).toBe(200);
    expect((await userinfo((await good.json()).access_token)).status).toBe(200);
  });

  it('rejects a refresh token reused after the grace window and revokes its chain (RFC 9700 4.14.2)', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f);
    const creds = { client_id: f.clientId, client_secret: f.clientSecret };
    const rotated = await (
      await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, ...creds })
    ).json();
    expect(rotated.refresh_token).toBeDefined();
    // Its rotation moved back past REFRESH_REUSE_GRACE_SECONDS (within it, a retry gets a new pair: test/faults/refreshRace.test.ts).
    await server.ctx
      .db('oauth_tokens')
      .where({ refresh_token_hash: hashToken(tokens.refresh_token!) })
      .update({ rotated_at: Date.now() - 31_000 });

    const reuse = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, ...creds });
    expect(reuse.status).toBe(400);
    expect((await reuse.json()).error).toBe('invalid_grant');
    // The whole family is gone: the newest access and refresh tokens too.
    expect((await userinfo(rotated.access_token)).status).toBe(401);
    const next = await tokenRequest({ grant_type: 'refresh_token', refresh_token: rotated.refresh_token, ...creds });
    expect((await next.json()).error).toBe('invalid_grant');
  });

  it('rejects a replayed code with invalid_grant and revokes the tokens issued from it (RFC 6749 4.1.2)', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens, code, verifier } = await obtainTokens(f);
    const replay = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: f.redirectUri,
      code_verifier: verifier,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('cache-control')).toBe('no-store');
    expect((await replay.json()).error).toBe('invalid_grant');
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    const refresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    });
    expect((await refresh.json()).error).toBe('invalid_grant');
  });

  it('lets only one of two concurrent exchanges of one code succeed', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(browser, authorizationUrl(f));
    const fields = {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: f.redirectUri,
      code_verifier: PKCE.verifier,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    };
    const results = await Promise.all(Array.from({ length: 5 }, () => tokenRequest(fields)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
    // The others were replays of the code (RFC 9700 4.2.4): the winner's tokens are revoked too.
    const winner = (await results.find((r) => r.status === 200)!.json()) as { access_token: string };
    expect((await userinfo(winner.access_token)).status).toBe(401);
  });

  it('rejects an expired code with invalid_grant', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(browser, authorizationUrl(f));
    await server.ctx.db('oauth_codes').update({ expires_at: Date.now() - 1000 });
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: f.redirectUri,
      code_verifier: PKCE.verifier,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('binds the code to its redirect_uri, its client and its PKCE verifier', async () => {
    const f = await createFixture(server.ctx.db);
    const other = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const exchange = async (fields: Record<string, string>) => {
      const callback = await authorizeInBrowser(
        browser,
        authorizationUrl(f, { code_challenge: challenge, code_challenge_method: 'S256' }),
      );
      const res = await tokenRequest({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: f.redirectUri,
        code_verifier: verifier,
        client_id: f.clientId,
        client_secret: f.clientSecret,
        ...fields,
      });
      return { status: res.status, body: await res.json() };
    };
    // RFC 6749 5.2: a redirect_uri that does not match the authorization request's is invalid_grant.
    expect(await exchange({ redirect_uri: 'https://client.example.test/other' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await exchange({ client_id: other.clientId, client_secret: other.clientSecret })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await exchange({ code_verifier: oauth.generateRandomCodeVerifier() })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect((await exchange({})).status).toBe(200);
  });

  it('answers a wrong client secret with 401 invalid_client and a Basic challenge, whichever method was used (RFC 9110 11.6.1)', async () => {
    const f = await createFixture(server.ctx.db);
    const body = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: 'ghr_x',
      client_id: f.clientId,
      client_secret: 'cs_wrong',
    });
    expect(body.status).toBe(401);
    expect(body.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(await body.json()).toMatchObject({ error: 'invalid_client' });

    const basic = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: 'ghr_x' },
      { authorization: `Basic ${Buffer.from(`${f.clientId}:cs_wrong`).toString('base64')}` },
    );
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(await basic.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('refuses two client authentication methods in one token request with 400 invalid_request (RFC 6749 2.3)', async () => {
    const f = await createFixture(server.ctx.db);
    const other = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f);
    const basic = (clientId: string, secret: string) => ({
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    });
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! };

    // Basic and client_secret_post together, even when both name the same client with its secret.
    const both = await tokenRequest(
      { ...refresh, client_id: f.clientId, client_secret: f.clientSecret },
      basic(f.clientId, f.clientSecret),
    );
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/not both/),
    });
    // Basic for one client, a body client_id naming another.
    const mismatch = await tokenRequest({ ...refresh, client_id: other.clientId }, basic(f.clientId, f.clientSecret));
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ error: 'invalid_request' });
    // A body client_id equal to Basic's is one method: accepted, and the refused requests spent nothing.
    const same = await tokenRequest({ ...refresh, client_id: f.clientId }, basic(f.clientId, f.clientSecret));
    expect(same.status).toBe(200);
    expect(await same.json()).toMatchObject({ access_token: expect.stringMatching(/^gho_/) });
  });

  it('reports token endpoint errors in RFC 6749 5.2 form', async () => {
    const f = await createFixture(server.ctx.db);
    const creds = { client_id: f.clientId, client_secret: f.clientSecret };
    const unsupported = await tokenRequest({ grant_type: 'password', ...creds });
    expect(await unsupported.json()).toMatchObject({ error: 'unsupported_grant_type' });
    const missingCode = await tokenRequest({ grant_type: 'authorization_code', redirect_uri: f.redirectUri, ...creds });
    expect(missingCode.status).toBe(400);
    expect(await missingCode.json()).toMatchObject({ error: 'invalid_request' });
    const { tokens } = await obtainTokens(f);
    const widen = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      scope: 'user_info api_key',
      ...creds,
    });
    expect(await widen.json()).toMatchObject({ error: 'invalid_scope' });
  });

  it('shows an error page, never a redirect, for an unknown client or a redirect_uri mismatch (RFC 6749 4.1.2.1)', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const cases: Record<string, string>[] = [
      { redirect_uri: 'https://evil.example/callback' },
      { redirect_uri: `${f.redirectUri}/` },
      { client_id: 'app_unknown' },
      { redirect_uri: '' },
    ];
    for (const params of cases) {
      const res = await browser.fetch(authorizationUrl(f, params).toString());
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(await res.text()).toContain('Authorization error');
    }
  });

  it('redirects other invalid requests to the client with error, error_description and state', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const cases: Array<[Record<string, string>, string]> = [
      [{ scope: 'user_info admin' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: '' }, 'invalid_request'],
      [
        { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'plain' },
        'invalid_request',
      ],
    ];
    for (const [params, error] of cases) {
      const res = await browser.fetch(authorizationUrl(f, { state: 'xyz', ...params }).toString());
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(f.redirectUri);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toBeTruthy();
      expect(location.searchParams.get('state')).toBe('xyz');
    }
  });

  it('redirects with error=access_denied and the state when the user denies', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(browser, authorizationUrl(f, { state: 'deny-me' }), 'deny');
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('deny-me');
    expect(callback.searchParams.get('code')).toBeNull();
    expect(() => oauth.validateAuthResponse(as, { client_id: f.clientId }, callback, 'deny-me')).toThrow(
      oauth.AuthorizationResponseError,
    );
  });

  it('sends a logged-out user to the login page and back to the consent page', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = new Browser(server.baseUrl);
    const url = authorizationUrl(f, { state: 'come-back' });
    const first = await browser.fetch(url.toString());
    expect(first.status).toBe(302);
    const login = new URL(first.headers.get('location')!, server.baseUrl);
    expect(login.pathname).toBe('/login');
    const returnTo = login.searchParams.get('return_to')!;
    const res = await logIn(browser, f.login, f.password, returnTo);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(url.pathname + url.search);
    const consent = await browser.fetch(res.headers.get('location')!);
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain(f.appName);
    expect(page).toContain('Reads your profile &lt;for tests&gt;');
    expect(page).toContain('https://client.example.test/');
  });

  it('names the app you are signing in to on the login page an authorization request sends you to', async () => {
    const f = await createFixture(server.ctx.db);
    const first = await new Browser(server.baseUrl).fetch(authorizationUrl(f).toString());
    const login = await (await fetch(new URL(first.headers.get('location')!, server.baseUrl))).text();
    expect(login).toContain(`to continue to <strong>${f.appName}</strong>`);
    // Not from an authorization request (or from one naming no registered app): no app named.
    expect(await (await fetch(`${server.baseUrl}/login`)).text()).not.toContain('continue to');
    expect(
      await (
        await fetch(`${server.baseUrl}/login?return_to=${encodeURIComponent('/oauth/authorize?client_id=app_nobody')}`)
      ).text(),
    ).not.toContain('continue to');
  });

  it('shows who registered the app on the consent page', async () => {
    const f = await createFixture(server.ctx.db);
    const page = await (await (await loggedIn(f)).fetch(authorizationUrl(f).toString())).text();
    expect(page).toContain(`Registered by <strong>${f.login}</strong>`);
  });

  it('remembers a grant: the same app and scopes (or fewer) answer with a code at once, until the user revokes the app', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    await authorizeInBrowser(browser, authorizationUrl(f, { scope: 'user_info api_key' }));
    for (const scope of ['user_info api_key', 'user_info', 'api_key']) {
      const again = await browser.fetch(authorizationUrl(f, { scope, state: 'again' }).toString());
      expect(again.status).toBe(302);
      const callback = new URL(again.headers.get('location')!);
      expect(callback.origin + callback.pathname).toBe(f.redirectUri);
      expect(callback.searchParams.get('state')).toBe('again');
      const res = await tokenRequest({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: f.redirectUri,
        code_verifier: PKCE.verifier,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      });
      expect(res.status).toBe(200);
      expect((await res.json()).scope).toBe(scope);
    }
    // prompt=consent asks all the same.
    expect((await browser.fetch(authorizationUrl(f, { prompt: 'consent' }).toString())).status).toBe(200);
    // The checks still run: a wrong callback is an error page, a bad PKCE method a redirected error.
    expect(
      (await browser.fetch(authorizationUrl(f, { redirect_uri: 'https://evil.example/cb' }).toString())).status,
    ).toBe(400);
    const badPkce = await browser.fetch(
      authorizationUrl(f, { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }).toString(),
    );
    expect(new URL(badPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    // PKCE is bound to the remembered code too: the exchange needs the verifier.
    const verifier = oauth.generateRandomCodeVerifier();
    const withPkce = await browser.fetch(
      authorizationUrl(f, {
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString(),
    );
    const code = new URL(withPkce.headers.get('location')!).searchParams.get('code')!;
    const base = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: f.redirectUri,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    };
    expect((await tokenRequest({ ...base, code_verifier: oauth.generateRandomCodeVerifier() })).status).toBe(400);

    // Revoked: asked again.
    const list = await (await browser.fetch('/settings/authorizations')).text();
    const action = /href="(\/settings\/authorizations\/\d+\/revoke)"/.exec(list)![1]!;
    const { csrf_token } = formFields(await (await browser.fetch(action)).text());
    expect((await browser.post(action, { csrf_token: csrf_token! })).status).toBe(303);
    expect((await browser.fetch(authorizationUrl(f).toString())).status).toBe(200);
  });

  it('asks again for a scope the user has not granted', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    await authorizeInBrowser(browser, authorizationUrl(f, { scope: 'user_info' }));
    const wider = await browser.fetch(authorizationUrl(f, { scope: 'user_info api_key' }).toString());
    expect(wider.status).toBe(200);
    // Another user of the same app is asked too.
    const other = await createFixture(server.ctx.db);
    expect(
      (
        await (
          await loggedIn(other)
        ).fetch(authorizationUrl({ ...other, clientId: f.clientId, redirectUri: f.redirectUri }).toString())
      ).status,
    ).toBe(200);
  });

  it('refuses a consent decision without the CSRF token', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const consent = await browser.fetch(authorizationUrl(f).toString());
    const fields = formFields(await consent.text());
    const res = await browser.post('/oauth/authorize/decision', { ...fields, csrf_token: 'forged', decision: 'allow' });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
  });

  it('answers userinfo without a token, or with a bad one, 401 with an RFC 6750 challenge', async () => {
    const none = await fetch(`${server.baseUrl}/api/open/v1/userinfo`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const bad = await userinfo('gho_not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('answers userinfo 401 once the access token expired', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f);
    await server.ctx.db('oauth_tokens').update({ access_expires_at: Date.now() - 1 });
    const res = await userinfo(tokens.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('answers userinfo 403 insufficient_scope to a token without user_info', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(f, { scope: 'api_key' });
    const res = await userinfo(tokens.access_token);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expect(await res.json()).toMatchObject({ status: 403 });
  });

  it('kills the access and refresh tokens at once when the user revokes the app in settings', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens, browser } = await obtainTokens(f, { scope: 'user_info api_key' });
    const list = await (await browser.fetch('/settings/authorizations')).text();
    expect(list).toContain(f.appName);
    expect(list).toContain('api_key');
    const { csrf_token } = formFields(list);
    const action = /href="(\/settings\/authorizations\/\d+\/revoke)"/.exec(list)![1]!;
    expect((await browser.post(action, { csrf_token: csrf_token! })).status).toBe(303);

    expect((await userinfo(tokens.access_token)).status).toBe(401);
    const refresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    });
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await (await browser.fetch('/settings/authorizations')).text()).not.toContain(f.appName);
  });

  it('revokes the authorization through the RFC 7009 endpoint, and answers 200 for unknown tokens', async () => {
    const f = await createFixture(server.ctx.db);
    const { tokens, client } = await obtainTokens(f);
    const auth = oauth.ClientSecretBasic(f.clientSecret);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, insecure),
    );
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, 'gho_unknown', insecure));
    const wrong = await oauth.revocationRequest(
      as,
      client,
      oauth.ClientSecretBasic('cs_wrong'),
      'gho_unknown',
      insecure,
    );
    expect(wrong.status).toBe(401);
  });

  it('shows an error on a wrong password (not a 500) and rate limits failed logins per account and address', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = new Browser(server.baseUrl);
    const res = await logIn(browser, f.login, 'wrong password');
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('Incorrect login or password');
    let last = res;
    for (let i = 0; i < 10; i += 1) last = await logIn(browser, f.login, 'wrong password');
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toBeTruthy();
  });

  it('sets the session cookie HttpOnly and SameSite=Lax', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = new Browser(server.baseUrl);
    const page = await browser.fetch('/login');
    const { csrf_token } = formFields(await page.text());
    const res = await browser.post('/login', {
      login: f.login,
      password: f.password,
      csrf_token: csrf_token!,
      return_to: '/settings',
    });
    const cookie = res.headers.getSetCookie().join('\n');
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
  });
});
