import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import {
  Browser,
  createFixture,
  discover,
  formFields,
  insecure,
  logIn,
  PKCE,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// Pushed authorization requests (RFC 9126) end to end: a real server and database; the client's
// side with oauth4webapi (its PAR support) or raw form posts, the user's with a cookie jar.

const PREFIX = 'urn:ietf:params:oauth:request_uri:';

describe.each(testDialects())('pushed authorization requests (%s)', (dialect) => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    as = await discover(server.baseUrl);
  });
  afterAll(() => server?.close());

  const requestParams = (f: Fixture, more: Record<string, string> = {}) => ({
    response_type: 'code',
    redirect_uri: f.redirectUri,
    scope: 'user_info',
    state: 'st-par',
    code_challenge: PKCE.challenge,
    code_challenge_method: 'S256',
    ...more,
  });

  /** A raw push: credentials in the body unless `headers` carry Basic. */
  const push = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/api/open/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields),
    });

  const pushFor = (f: Fixture, more: Record<string, string> = {}) =>
    push({ ...requestParams(f, more), client_id: f.clientId, client_secret: f.clientSecret });

  async function pushed(f: Fixture, more: Record<string, string> = {}): Promise<string> {
    const res = await pushFor(f, more);
    expect(res.status).toBe(201);
    return ((await res.json()) as { request_uri: string }).request_uri;
  }

  const authorizeUrl = (clientId: string, requestUri: string, more: Record<string, string> = {}) =>
    `/oauth/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri, ...more })}`;

  async function loggedIn(f: Fixture): Promise<Browser> {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    return browser;
  }

  const exchange = (f: Fixture, code: string) =>
    fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: f.redirectUri,
        code_verifier: PKCE.verifier,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });

  /** An error page: 400, HTML, no redirect. */
  async function expectErrorPage(res: Response, text: RegExp) {
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(text);
  }

  const pushedRows = async (f: Fixture) => {
    const app = await server.ctx.db('applications').where({ client_id: f.clientId }).first();
    return server.ctx.db('oauth_pushed_requests').where({ application_id: app.id });
  };

  it('publishes the endpoint in both metadata documents, and require_pushed_authorization_requests false', async () => {
    expect(as.pushed_authorization_request_endpoint).toBe(`${server.baseUrl}/api/open/oauth/par`);
    expect(as.require_pushed_authorization_requests).toBe(false);
    const openid = await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json();
    expect(openid).toMatchObject({
      pushed_authorization_request_endpoint: `${server.baseUrl}/api/open/oauth/par`,
      require_pushed_authorization_requests: false,
    });
  });

  it('runs the flow with oauth4webapi: push, authorize with the request_uri, consent, code, tokens', async () => {
    const f = await createFixture(server.ctx.db);
    const client = { client_id: f.clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const response = await oauth.pushedAuthorizationRequest(
      as,
      client,
      oauth.ClientSecretBasic(f.clientSecret),
      {
        response_type: 'code',
        redirect_uri: f.redirectUri,
        scope: 'user_info',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      insecure,
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const { request_uri, expires_in } = await oauth.processPushedAuthorizationResponse(as, client, response);
    expect(request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:par_[A-Za-z0-9_-]{43}$/);
    expect(expires_in).toBe(60);
    // Only the secret's hash is stored: nothing in the row gives the request_uri back.
    const [row] = await pushedRows(f);
    expect(JSON.stringify(row)).not.toContain(request_uri.slice(PREFIX.length));

    const browser = await loggedIn(f);
    const consent = await browser.fetch(authorizeUrl(f.clientId, request_uri));
    expect(consent.status).toBe(200);
    const fields = formFields(await consent.text());
    expect(Object.keys(fields).sort()).toEqual(['client_id', 'csrf_token', 'request_uri']);
    const answer = await browser.post('/oauth/authorize/decision', { ...fields, decision: 'allow' });
    expect(answer.status).toBe(303);
    const callback = new URL(answer.headers.get('location')!);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(f.clientSecret),
        params,
        f.redirectUri,
        verifier,
        insecure,
      ),
    );
    expect(tokens.access_token).toMatch(/^gho_/);
    expect(tokens.scope).toBe('user_info');

    // Replayed: the authorize URL and the decision alike are an error page, and no second code.
    await expectErrorPage(
      await browser.fetch(authorizeUrl(f.clientId, request_uri)),
      /unknown, expired or already used/,
    );
    const again = await browser.post('/oauth/authorize/decision', { ...fields, decision: 'allow' });
    await expectErrorPage(again, /unknown, expired or already used/);
  });

  it('ignores the query parameters beside request_uri: the pushed ones are the request', async () => {
    const f = await createFixture(server.ctx.db);
    const requestUri = await pushed(f);
    const browser = await loggedIn(f);
    const page = await browser.fetch(
      authorizeUrl(f.clientId, requestUri, { scope: 'api_key', redirect_uri: 'https://evil.example/cb' }),
    );
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('<code>user_info</code>');
    expect(text).not.toContain('evil.example');
  });

  it('lets the user log in first: the login page comes back to the request_uri, which still works', async () => {
    const f = await createFixture(server.ctx.db);
    const requestUri = await pushed(f, { prompt: 'login' });
    const browser = new Browser(server.baseUrl);
    const toLogin = await browser.fetch(authorizeUrl(f.clientId, requestUri));
    expect(toLogin.status).toBe(302);
    const returnTo = new URL(toLogin.headers.get('location')!, server.baseUrl).searchParams.get('return_to')!;
    expect(returnTo).toBe(authorizeUrl(f.clientId, requestUri));
    expect((await logIn(browser, f.login, f.password, returnTo)).status).toBe(303);
    // prompt=login is met by this login, made after the push: the consent page, not the login again.
    expect((await browser.fetch(returnTo)).status).toBe(200);
  });

  it('uses the request_uri up when the user denies, and when a remembered grant issues its code at once', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const denied = await pushed(f);
    const page = await browser.fetch(authorizeUrl(f.clientId, denied));
    const fields = formFields(await page.text());
    const answer = await browser.post('/oauth/authorize/decision', { ...fields, decision: 'deny' });
    expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    await expectErrorPage(await browser.fetch(authorizeUrl(f.clientId, denied)), /already used/);

    const first = await pushed(f);
    const consent = formFields(await (await browser.fetch(authorizeUrl(f.clientId, first))).text());
    const allowed = await browser.post('/oauth/authorize/decision', { ...consent, decision: 'allow' });
    expect(new URL(allowed.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    const remembered = await pushed(f);
    const direct = await browser.fetch(authorizeUrl(f.clientId, remembered));
    expect(direct.status).toBe(302);
    const code = new URL(direct.headers.get('location')!).searchParams.get('code')!;
    expect((await exchange(f, code)).status).toBe(200);
    await expectErrorPage(await browser.fetch(authorizeUrl(f.clientId, remembered)), /already used/);
  });

  it('issues one code from two concurrent decisions on the same request_uri; the other gets the error page', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const requestUri = await pushed(f);
    const fields = formFields(await (await browser.fetch(authorizeUrl(f.clientId, requestUri))).text());
    const answers = await Promise.all(
      [1, 2].map(() => browser.post('/oauth/authorize/decision', { ...fields, decision: 'allow' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 400]);
    const codes = await server.ctx.db('oauth_codes').where({ user_id: f.userId });
    expect(codes).toHaveLength(1);
  });

  it('gives the user time to log in and decide once the browser brought the request_uri, and no more', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const requestUri = await pushed(f);
    const [before] = await pushedRows(f);
    const fields = formFields(await (await browser.fetch(authorizeUrl(f.clientId, requestUri))).text());
    const [opened] = await pushedRows(f);
    expect(Number(opened.opened_at)).toBeGreaterThan(0);
    expect(Number(opened.expires_at) - Number(opened.opened_at)).toBe(600_000);
    expect(Number(opened.expires_at)).toBeGreaterThan(Number(before.expires_at));
    // Past that time (set back rather than waited for), the decision is refused.
    await server.ctx
      .db('oauth_pushed_requests')
      .where({ id: opened.id })
      .update({ expires_at: Date.now() - 1 });
    const late = await browser.post('/oauth/authorize/decision', { ...fields, decision: 'allow' });
    await expectErrorPage(late, /unknown, expired or already used/);
    // A decision for a request_uri no browser brought to /oauth/authorize is refused too.
    const unopened = await pushed(f);
    const direct = await browser.post('/oauth/authorize/decision', {
      client_id: f.clientId,
      request_uri: unopened,
      csrf_token: fields.csrf_token!,
      decision: 'allow',
    });
    await expectErrorPage(direct, /unknown, expired or already used/);
  });

  it('answers an unknown, malformed, expired or foreign request_uri with an error page, never a redirect', async () => {
    const f = await createFixture(server.ctx.db);
    const other = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    for (const uri of [`${PREFIX}par_unknown`, 'https://attacker.example/request', ''])
      await expectErrorPage(await browser.fetch(authorizeUrl(f.clientId, uri)), /unknown, expired or already used/);
    await expectErrorPage(
      await browser.fetch(`${authorizeUrl(f.clientId, `${PREFIX}x`)}&request_uri=y`),
      /more than once/,
    );
    await expectErrorPage(await browser.fetch(authorizeUrl('app_nobody', `${PREFIX}x`)), /no application/);

    // Another client's request_uri is refused, and stays usable by its own client.
    const foreign = await pushed(other);
    await expectErrorPage(await browser.fetch(authorizeUrl(f.clientId, foreign)), /unknown, expired or already used/);
    const owner = await loggedIn(other);
    expect((await owner.fetch(authorizeUrl(other.clientId, foreign))).status).toBe(200);

    // Expired before the browser brought it (its expiry set back rather than waited for).
    const expired = await pushed(f);
    await server.ctx
      .db('oauth_pushed_requests')
      .where({ application_id: (await pushedRows(f))[0].application_id })
      .update({ expires_at: Date.now() - 1 });
    await expectErrorPage(await browser.fetch(authorizeUrl(f.clientId, expired)), /unknown, expired or already used/);
  });

  it('refuses an unauthenticated or wrongly authenticated client, and two clients in one request', async () => {
    const f = await createFixture(server.ctx.db);
    const other = await createFixture(server.ctx.db);
    const anonymous = await push({ ...requestParams(f), client_id: f.clientId });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="token"');
    expect(await anonymous.json()).toMatchObject({ error: 'invalid_client' });
    const wrong = await push({ ...requestParams(f), client_id: f.clientId, client_secret: 'cs_wrong' });
    expect(wrong.status).toBe(401);
    // Basic for one client, a body client_id naming another: two methods (RFC 6749 2.3).
    const basic = `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`;
    const mixed = await push({ ...requestParams(f), client_id: other.clientId }, { authorization: basic });
    expect(mixed.status).toBe(400);
    expect(await mixed.json()).toMatchObject({ error: 'invalid_request' });
    // Another client's redirect_uri is not this client's.
    const otherUri = await createFixture(server.ctx.db, 'https://other.example.test/cb');
    const stolen = await push({ ...requestParams(otherUri), client_id: f.clientId, client_secret: f.clientSecret });
    expect(await stolen.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    expect(await pushedRows(f)).toEqual([]);
  });

  it('validates the parameters when they are pushed, answering JSON in OAuth words, and stores nothing', async () => {
    const f = await createFixture(server.ctx.db);
    const cases: Array<[Record<string, string>, string, number?]> = [
      [{ redirect_uri: 'https://client.example.test/other' }, 'invalid_redirect_uri'],
      [{ scope: 'user_info admin' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: '', code_challenge_method: '' }, 'invalid_request'],
      [{ state: 'x'.repeat(2001) }, 'invalid_request'],
      [{ prompt: 'select_account' }, 'invalid_request'],
      [{ max_age: '-1' }, 'invalid_request'],
      [{ request_uri: `${PREFIX}par_abc` }, 'invalid_request'],
    ];
    for (const [more, error] of cases) {
      const res = await pushFor(f, more);
      expect(res.status, JSON.stringify(more)).toBe(400);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(((await res.json()) as { error: string }).error, JSON.stringify(more)).toBe(error);
    }
    const missing = await push({
      client_id: f.clientId,
      client_secret: f.clientSecret,
      response_type: 'code',
      scope: 'user_info',
    });
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
    const repeated = await fetch(`${server.baseUrl}/api/open/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${new URLSearchParams({ ...requestParams(f), client_id: f.clientId, client_secret: f.clientSecret })}&scope=api_key`,
    });
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({ error: 'invalid_request' });
    expect(await pushedRows(f)).toEqual([]);
  });

  it('refuses a malformed or oversized body with the token endpoint JSON errors', async () => {
    const f = await createFixture(server.ctx.db);
    const json = await fetch(`${server.baseUrl}/api/open/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...requestParams(f), client_id: f.clientId, client_secret: f.clientSecret }),
    });
    expect(json.status).toBe(415);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
    const huge = await pushFor(f, { nonce: 'n'.repeat(server.ctx.config.BODY_LIMIT_BYTES + 10) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: 'invalid_request' });
    const badBasic = await push(requestParams(f), { authorization: 'Basic bm9jb2xvbg==' });
    expect(badBasic.status).toBe(400);
    expect(await pushedRows(f)).toEqual([]);
  });

  it('refuses a plain authorization request of an application that requires pushed ones, with a redirect', async () => {
    const f = await createFixture(server.ctx.db);
    await server.ctx
      .db('applications')
      .where({ client_id: f.clientId })
      .update({ require_pushed_authorization_requests: true });
    const browser = await loggedIn(f);
    const plain = await browser.fetch(
      `/oauth/authorize?${new URLSearchParams({ ...requestParams(f), client_id: f.clientId })}`,
    );
    expect(plain.status).toBe(302);
    const location = new URL(plain.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(f.redirectUri);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('state')).toBe('st-par');
    // The consent form posted without a request_uri is refused the same way.
    const page = await browser.fetch(authorizeUrl(f.clientId, await pushed(f)));
    const { csrf_token } = formFields(await page.text());
    const forged = await browser.post('/oauth/authorize/decision', {
      ...requestParams(f),
      client_id: f.clientId,
      csrf_token: csrf_token!,
      decision: 'allow',
    });
    expect(new URL(forged.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    // With PAR it works.
    const requestUri = await pushed(f);
    const consent = await browser.fetch(authorizeUrl(f.clientId, requestUri));
    expect(consent.status).toBe(200);
  });
});
