import * as oauth from 'oauth4webapi';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyProxyToken } from '../open/proxyTokens.ts';
import { testDialects } from '../../test/support/db.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  formFields,
  insecure,
  logIn,
  PKCE,
  withPkce,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { atHash } from './idToken.ts';

// OpenID Connect Core 1.0 sign-in on the authorization-code flow: discovery, the ID token of the
// code exchange and of a refresh, nonce, prompt and max_age. A real HTTP server and database; the
// user's side through the pages with a cookie jar, the client's with oauth4webapi (OIDC mode).

describe.each(testDialects())('OpenID Connect sign-in (%s)', (dialect) => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const issuer = new URL(server.baseUrl);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
    );
  });
  afterAll(() => server?.close());

  async function loggedIn(f: Fixture): Promise<Browser> {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    return browser;
  }

  function authorizationUrl(f: Fixture, params: Record<string, string> = {}): URL {
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'openid user_info',
      state: 'st',
      ...params,
    }).toString();
    return withPkce(url); // exchanged with PKCE.verifier
  }

  /** The authorization response's parameters after `url`, which must redirect to the client at once. */
  async function redirectParams(browser: Browser, url: URL): Promise<URLSearchParams> {
    const res = await browser.fetch(url.toString());
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(url.searchParams.get('redirect_uri'));
    return location.searchParams;
  }

  async function exchange(f: Fixture, callback: URL) {
    const client = { client_id: f.clientId };
    const params = oauth.validateAuthResponse(as, client, callback, 'st');
    return oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(f.clientSecret),
      params,
      f.redirectUri,
      PKCE.verifier,
      insecure,
    );
  }

  async function verifiedClaims(idToken: string, f: Fixture): Promise<JWTPayload> {
    const jwks = (await (await fetch(as.jwks_uri!)).json()) as Parameters<typeof createLocalJWKSet>[0];
    // RS256: the fixtures' apps are registered without id_token_signed_response_alg (idTokenAlgs.test.ts has ES256).
    const { payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
      issuer: server.baseUrl,
      audience: f.clientId,
      algorithms: ['RS256'],
    });
    return payload;
  }

  it('publishes /.well-known/openid-configuration beside RFC 8414 metadata, with the same endpoints (Discovery 1.0, 3)', async () => {
    const rfc8414 = (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    const res = await fetch(`${server.baseUrl}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const oidc = (await res.json()) as Record<string, unknown>;
    expect(oidc).toMatchObject(rfc8414);
    expect(oidc).toMatchObject({
      issuer: server.baseUrl,
      jwks_uri: `${server.baseUrl}/.well-known/jwks.json`,
      userinfo_endpoint: `${server.baseUrl}/api/open/v1/userinfo`,
      scopes_supported: ['openid', 'user_info', 'api_key', 'workflows:run', 'workflows:read'],
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      request_uri_parameter_supported: false,
    });
    expect(oidc.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash']),
    );
  });

  it('adds an RS256 id_token to the code exchange of an openid request: iss, sub (userinfo sub), aud, exp, iat, auth_time, nonce, at_hash (Core 3.1.3.3)', async () => {
    const f = await createFixture(server.ctx.db);
    const before = Math.floor(Date.now() / 1000);
    const browser = await loggedIn(f);
    const nonce = oauth.generateRandomNonce();
    // Through the consent page: the nonce goes through the consent form.
    const callback = await authorizeInBrowser(browser, authorizationUrl(f, { nonce }));
    const response = await exchange(f, callback);
    const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: f.clientId }, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    expect(tokens.scope).toBe('openid user_info');
    const idToken = tokens.id_token!;
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    const claims = await verifiedClaims(idToken, f);
    expect(Object.keys(claims).sort()).toEqual(['at_hash', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'nonce', 'sub']);
    expect(claims).toMatchObject({
      iss: server.baseUrl,
      sub: String(f.userId),
      aud: f.clientId,
      nonce,
      at_hash: atHash(tokens.access_token),
    });
    expect(claims.exp! - claims.iat!).toBe(server.ctx.config.ID_TOKEN_TTL_SECONDS);
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    expect(claims.auth_time).toBeLessThanOrEqual(claims.iat!);

    const userinfo = await fetch(as.userinfo_endpoint!, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(((await userinfo.json()) as { sub: string }).sub).toBe(claims.sub);
    // An ID token is no proxy token: another typ and audience.
    expect(await verifyProxyToken(server.ctx, idToken)).toBeNull();
  });

  it("carries the nonce of a remembered grant's request, and the login time, not the time of the request (auth_time)", async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    await authorizeInBrowser(browser, authorizationUrl(f));
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 5000 });
    try {
      const params = await redirectParams(browser, authorizationUrl(f, { nonce: 'n-remembered' }));
      const callback = new URL(`${f.redirectUri}?${params}`);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        { client_id: f.clientId },
        await exchange(f, callback),
        { expectedNonce: 'n-remembered' },
      );
      const claims = await verifiedClaims(tokens.id_token!, f);
      expect(claims.nonce).toBe('n-remembered');
      expect(claims.iat! - Number(claims.auth_time)).toBeGreaterThanOrEqual(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('issues no id_token without openid: the seed scopes work as before', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(
      browser,
      authorizationUrl(f, { scope: 'user_info api_key', nonce: 'ignored' }),
    );
    const body = (await (await exchange(f, callback)).json()) as Record<string, unknown>;
    expect(body.scope).toBe('user_info api_key');
    expect(body).not.toHaveProperty('id_token');
  });

  it('adds an id_token on refresh with the same iss, sub, aud and auth_time, a new at_hash and no nonce (Core 12.2); none when the refresh narrows openid away', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(browser, authorizationUrl(f, { nonce: 'n1' }));
    const first = await oauth.processAuthorizationCodeResponse(
      as,
      { client_id: f.clientId },
      await exchange(f, callback),
      { expectedNonce: 'n1' },
    );
    const original = await verifiedClaims(first.id_token!, f);
    const client = { client_id: f.clientId };
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(f.clientSecret),
        first.refresh_token!,
        insecure,
      ),
    );
    const claims = await verifiedClaims(refreshed.id_token!, f);
    expect(claims).toMatchObject({
      iss: original.iss,
      sub: original.sub,
      aud: original.aud,
      auth_time: original.auth_time,
      at_hash: atHash(refreshed.access_token),
    });
    expect(claims).not.toHaveProperty('nonce');

    const narrowed = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(f.clientSecret),
      refreshed.refresh_token!,
      { ...insecure, additionalParameters: { scope: 'user_info' } },
    );
    const body = (await narrowed.json()) as Record<string, unknown>;
    expect(body.scope).toBe('user_info');
    expect(body).not.toHaveProperty('id_token');
  });

  it('prompt=none: login_required without a session, consent_required without a grant, a code with both; never a page (Core 3.1.2.6)', async () => {
    const f = await createFixture(server.ctx.db);
    const anonymous = new Browser(server.baseUrl);
    const noSession = await redirectParams(anonymous, authorizationUrl(f, { prompt: 'none' }));
    expect(Object.fromEntries(noSession)).toMatchObject({ error: 'login_required', state: 'st', iss: server.baseUrl });

    const browser = await loggedIn(f);
    const noGrant = await redirectParams(browser, authorizationUrl(f, { prompt: 'none' }));
    expect(Object.fromEntries(noGrant)).toMatchObject({ error: 'consent_required', state: 'st', iss: server.baseUrl });

    await authorizeInBrowser(browser, authorizationUrl(f));
    expect((await redirectParams(browser, authorizationUrl(f, { prompt: 'none' }))).get('code')).toBeTruthy();
    expect((await redirectParams(browser, authorizationUrl(f, { prompt: 'none', max_age: '0' }))).get('error')).toBe(
      'login_required',
    );
    expect((await redirectParams(browser, authorizationUrl(f, { prompt: 'none consent' }))).get('error')).toBe(
      'invalid_request',
    );
  });

  it('prompt=login shows the login form to a signed-in user and comes back without it, with a newer auth_time (Core 3.1.2.1)', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    await authorizeInBrowser(browser, authorizationUrl(f));
    const first = await verifiedClaims(
      (
        await oauth.processAuthorizationCodeResponse(
          as,
          { client_id: f.clientId },
          await exchange(f, new URL(`${f.redirectUri}?${await redirectParams(browser, authorizationUrl(f))}`)),
        )
      ).id_token!,
      f,
    );

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3000 });
    try {
      const toLogin = await browser.fetch(authorizationUrl(f, { prompt: 'login consent', nonce: 'n2' }).toString());
      expect(toLogin.status).toBe(302);
      const loginLocation = new URL(toLogin.headers.get('location')!, server.baseUrl);
      expect(loginLocation.pathname).toBe('/login');
      const returnTo = new URL(loginLocation.searchParams.get('return_to')!, server.baseUrl);
      expect(returnTo.searchParams.get('prompt')).toBe('consent');
      expect(returnTo.searchParams.get('nonce')).toBe('n2');
      const form = await browser.fetch(loginLocation.toString());
      expect(form.status).toBe(200);
      const loggedInAgain = await browser.post('/login', {
        login: f.login,
        password: f.password,
        csrf_token: formFields(await form.text()).csrf_token!,
        return_to: `${returnTo.pathname}${returnTo.search}`,
      });
      expect(loggedInAgain.status).toBe(303);
      // prompt=consent is kept: the consent page, then the code.
      const consent = await browser.fetch(new URL(loggedInAgain.headers.get('location')!, server.baseUrl).toString());
      expect(consent.status).toBe(200);
      const answer = await browser.post('/oauth/authorize/decision', {
        ...formFields(await consent.text()),
        decision: 'allow',
      });
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        { client_id: f.clientId },
        await exchange(f, new URL(answer.headers.get('location')!)),
        { expectedNonce: 'n2' },
      );
      const claims = await verifiedClaims(tokens.id_token!, f);
      expect(Number(claims.auth_time) - Number(first.auth_time)).toBeGreaterThanOrEqual(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('max_age: a login older than max_age seconds logs in again, a fresh one does not (Core 3.1.2.1)', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    await authorizeInBrowser(browser, authorizationUrl(f));
    expect((await redirectParams(browser, authorizationUrl(f, { max_age: '60' }))).get('code')).toBeTruthy();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 120_000 });
    try {
      const stale = await browser.fetch(authorizationUrl(f, { max_age: '60' }).toString());
      expect(stale.status).toBe(302);
      const location = new URL(stale.headers.get('location')!, server.baseUrl);
      expect(location.pathname).toBe('/login');
      expect(location.searchParams.get('return_to')).not.toContain('max_age');
      expect((await redirectParams(browser, authorizationUrl(f, { max_age: '60', prompt: 'none' }))).get('error')).toBe(
        'login_required',
      );
      expect((await redirectParams(browser, authorizationUrl(f, { max_age: '600' }))).get('code')).toBeTruthy();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a malformed nonce, prompt or max_age with invalid_request at the redirect_uri', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const malformed: Record<string, string>[] = [
      { nonce: 'n'.repeat(256) },
      { prompt: 'select_account' },
      { max_age: '-1' },
      { max_age: 'soon' },
    ];
    for (const params of malformed) {
      const answer = await redirectParams(browser, authorizationUrl(f, params));
      expect(answer.get('error'), JSON.stringify(params)).toBe('invalid_request');
    }
  });
});
