// A valid `state` may be 2,000 characters of any Unicode (openapi.yaml). 2,000 four-byte characters
// are 24,000 bytes percent-encoded: over Node's default 16 KiB header limit, which used to answer an
// empty-bodied 431. The whole flow must work; a request over the raised limit gets a documented body.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceProblems } from '../../contract-tests/spec.ts';
import { Browser, createFixture, formFields, logIn, PKCE, type Fixture } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http with a client header limit large enough to read the long redirects (fetch stops at 16 KiB). */
function raw(
  url: URL,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, maxHeaderSize: 256 * 1024 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('a 2,000-character state of 4-byte characters', () => {
  let server: TestServer;
  let f: Fixture;
  const state = '😀'.repeat(2000);

  beforeAll(async () => {
    server = await startTestServer();
    f = await createFixture(server.ctx.db);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('comes back unchanged on the callback after login and consent', async () => {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const url = new URL('/oauth/authorize', server.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info',
      state,
      code_challenge: PKCE.challenge,
      code_challenge_method: 'S256',
    }).toString();
    expect(url.toString().length).toBeGreaterThan(16 * 1024);

    const consent = await raw(url, { headers: { cookie } });
    expect(consent.status, consent.body.slice(0, 300)).toBe(200);
    const fields = formFields(consent.body);
    const answer = await raw(new URL('/oauth/authorize/decision', server.baseUrl), {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }).toString(),
    });
    expect(answer.status).toBe(303);
    const callback = new URL(String(answer.headers.location));
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  it('is kept through the login redirect of a user who is not logged in', async () => {
    const url = new URL('/oauth/authorize', server.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info',
      state,
      code_challenge: PKCE.challenge,
      code_challenge_method: 'S256',
    }).toString();
    const res = await raw(url);
    expect(res.status).toBe(302);
    const login = await raw(new URL(String(res.headers.location), server.baseUrl));
    expect(login.status).toBe(200);
    expect(login.body).toContain(encodeURIComponent('😀').slice(0, 9));
  });

  it('a request over the 64 KiB header limit gets the documented 431 with a problem+json body', async () => {
    const url = new URL('/oauth/authorize', server.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      state: '😀'.repeat(6000),
    }).toString();
    const res = await raw(url);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const body = JSON.parse(res.body) as unknown;
    expect(body).toMatchObject({ status: 431, title: 'Request Header Fields Too Large' });
    expect(conformanceProblems('authorize', 431, 'application/problem+json', body)).toEqual([]);
  });
});
