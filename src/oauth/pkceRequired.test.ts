import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { authorizeInBrowser, Browser, createFixture, logIn, PKCE, type Fixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { findAppByClientId, setPkceRequired } from '../accounts/apps.ts';

// PKCE for every client (RFC 9700 2.1.1: confidential clients too). A request without
// code_challenge is refused the RFC 6749 4.1.2.1 way (a redirect with error=invalid_request),
// unless the operator exempted this confidential client (admin CLI: app update --pkce optional).

describe.each(testDialects())('PKCE required of every client (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());

  const authorizationUrl = (f: Fixture, params: Record<string, string> = {}) =>
    new URL(
      `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: f.clientId, redirect_uri: f.redirectUri, scope: 'user_info', state: 'st-1', ...params })}`,
      server.baseUrl,
    );

  async function loggedIn(f: Fixture): Promise<Browser> {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    return browser;
  }

  const exchange = (f: Fixture, code: string, more: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: f.redirectUri,
        client_id: f.clientId,
        client_secret: f.clientSecret,
        ...more,
      }),
    });

  it('redirects a request without code_challenge back with error=invalid_request, saying PKCE is required, and issues no code', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const before = await server.ctx.db('oauth_codes').count({ n: '*' }).first();
    const res = await browser.fetch(authorizationUrl(f).toString());
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(f.redirectUri);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'invalid_request',
      error_description:
        'PKCE is required: send code_challenge (the base64url SHA-256 of a code verifier) with code_challenge_method=S256.',
      state: 'st-1',
      iss: server.baseUrl,
    });
    expect(await server.ctx.db('oauth_codes').count({ n: '*' }).first()).toEqual(before);
  });

  it('refuses it for a grant the user already gave (no consent page) and for a logged-out user alike', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = await loggedIn(f);
    const code = (await authorizeInBrowser(browser, authorizationUrl(f))).searchParams.get('code')!; // with the helpers' PKCE
    expect((await exchange(f, code, { code_verifier: PKCE.verifier })).status).toBe(200);
    const again = await browser.fetch(authorizationUrl(f).toString());
    expect(new URL(again.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const anonymous = await fetch(authorizationUrl(f), { redirect: 'manual' });
    expect(new URL(anonymous.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('lets a confidential client the operator exempted leave PKCE out, and requires it again once the exemption is lifted', async () => {
    const f = await createFixture(server.ctx.db, undefined, { pkceRequired: false });
    const browser = await loggedIn(f);
    const callback = await authorizeInBrowser(browser, authorizationUrl(f), 'allow', { pkce: false });
    expect(callback.searchParams.get('error')).toBeNull();
    const res = await exchange(f, callback.searchParams.get('code')!);
    expect(res.status).toBe(200);
    // PKCE sent all the same is still enforced.
    const withPkce = await authorizeInBrowser(browser, authorizationUrl(f));
    expect((await exchange(f, withPkce.searchParams.get('code')!)).status).toBe(400);

    const app = (await findAppByClientId(server.ctx, f.clientId))!;
    await setPkceRequired(server.ctx, app.id, true);
    const refused = await browser.fetch(authorizationUrl(f).toString());
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('stores the requirement per application: true unless the operator says otherwise', async () => {
    const f = await createFixture(server.ctx.db);
    const row = await server.ctx.db('applications').where({ client_id: f.clientId }).first();
    expect(Boolean(row.pkce_required)).toBe(true);
  });
});
