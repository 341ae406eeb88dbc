import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, authorizeInBrowser, createFixture, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// RFC 9207: every authorization response names its issuer, and the metadata says so, so a client
// talking to several authorization servers can tell which one answered (mix-up attacks).

describe('the issuer in authorization responses (RFC 9207)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the metadata announces authorization_response_iss_parameter_supported', async () => {
    const metadata = (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({ issuer: server.baseUrl, authorization_response_iss_parameter_supported: true });
  });

  it('a code, a denial and an error redirect each carry iss', async () => {
    const f = await createFixture(server.ctx.db);
    const browser = new Browser(server.baseUrl);
    await logIn(browser, f.login, f.password);
    const url = new URL('/oauth/authorize', server.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info',
      state: 's1',
    }).toString();

    const allowed = await authorizeInBrowser(browser, url, 'allow');
    expect(allowed.searchParams.get('code')).toBeTruthy();
    expect(allowed.searchParams.get('iss')).toBe(server.baseUrl);

    const denied = await authorizeInBrowser(browser, url, 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('iss')).toBe(server.baseUrl);

    url.searchParams.set('scope', 'no_such_scope');
    const invalid = await browser.fetch(url.toString());
    expect(invalid.status).toBe(302);
    const location = new URL(invalid.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_scope');
    expect(location.searchParams.get('iss')).toBe(server.baseUrl);
  });
});
