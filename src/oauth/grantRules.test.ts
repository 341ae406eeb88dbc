import type { Request } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../shared/crypto.ts';
import { OAuthError } from '../shared/errors.ts';
import { testDialects } from '../../test/support/db.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  discover,
  logIn,
  obtainTokens,
  PKCE,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { clientCredentials } from './clientAuth.ts';

// Rules of the token and revocation endpoints read against RFC 6749 and oidc-provider's grants,
// over HTTP on a real server and database.

const basic = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

describe('client credentials in HTTP Basic (RFC 6749 2.3.1)', () => {
  const credentials = (authorization: string, body: Record<string, string> = {}) =>
    clientCredentials({ headers: { authorization }, body } as unknown as Request);

  it('form-decodes the client id and secret: +, %XX escapes, a colon in the secret, non-ASCII', () => {
    expect(credentials(basic('app%3Aone', 'a+b%2Bc%25d:e%C3%A9'))).toMatchObject({
      clientId: 'app:one',
      clientSecret: 'a b+c%d:eé',
      secondMethod: false,
    });
  });

  it('refuses a header without a colon, or with a bad percent-escape, as invalid_request (400), not a failed authentication', () => {
    for (const header of [
      `Basic ${Buffer.from('app-without-colon').toString('base64')}`,
      basic('app', 'bad%zzescape'),
      basic('app%', 'secret'),
    ]) {
      const refusal = (() => {
        try {
          credentials(header);
        } catch (err) {
          return err;
        }
      })();
      expect(refusal).toBeInstanceOf(OAuthError);
      expect(refusal).toMatchObject({ error: 'invalid_request', status: 400 });
    }
  });
});

describe.each(testDialects())('grant rules over HTTP (%s)', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());

  const post = async (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string> };
  };
  const tokenRequest = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    post('/api/open/oauth/token', fields, headers);
  const refresh = (f: Fixture, refreshToken: string, extra: Record<string, string> = {}) =>
    tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: f.clientId,
      client_secret: f.clientSecret,
      ...extra,
    });
  const status = async (path: string, accessToken: string) =>
    (await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
  const aGrant = async (scope = 'user_info') => {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, scope);
    return { f, accessToken: tokens.access_token, refreshToken: tokens.refresh_token! };
  };

  it('narrows the access token on a refresh with a smaller scope, and the grant keeps its own (RFC 6749 6)', async () => {
    const { f, refreshToken } = await aGrant('user_info api_key');
    const narrowed = await refresh(f, refreshToken, { scope: 'user_info' });
    expect(narrowed).toMatchObject({ status: 200, body: { scope: 'user_info' } });
    expect(await status('/api/open/v1/userinfo', narrowed.body.access_token!)).toBe(200);
    expect(await status(`/api/open/v1/${f.login}/tokens`, narrowed.body.access_token!)).toBe(403);
    // An omitted scope is the one originally granted, and the original may be asked for again.
    const whole = await refresh(f, narrowed.body.refresh_token!);
    expect(whole).toMatchObject({ status: 200, body: { scope: 'user_info api_key' } });
    expect(await status(`/api/open/v1/${f.login}/tokens`, whole.body.access_token!)).toBe(200);
    expect(await refresh(f, whole.body.refresh_token!, { scope: 'api_key user_info' })).toMatchObject({
      status: 200,
      body: { scope: 'user_info api_key' },
    });
  });

  /** A code exchanged by its own client: the code (now used) and the pair it gave. */
  async function anExchangedCode(f: Fixture): Promise<{ code: string; accessToken: string; refreshToken: string }> {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const url = new URL(`${server.baseUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info',
      state: 's',
    }).toString();
    const code = (await authorizeInBrowser(browser, url)).searchParams.get('code')!;
    const exchanged = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: f.redirectUri,
      code_verifier: PKCE.verifier,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    });
    expect(exchanged.status).toBe(200);
    return { code, accessToken: exchanged.body.access_token!, refreshToken: exchanged.body.refresh_token! };
  }

  it("checks the client before revoking anything: another app presenting A's used code, rotated or expired refresh token ends nothing (oidc-provider's findGrantSource)", async () => {
    const a = await createFixture(server.ctx.db);
    const b = await createFixture(server.ctx.db);
    const asB = { client_id: b.clientId, client_secret: b.clientSecret };
    const exchanged = await anExchangedCode(a);
    // A's used code, presented by B: for A it would be a replay that revokes.
    const replay = await tokenRequest({
      grant_type: 'authorization_code',
      code: exchanged.code,
      redirect_uri: a.redirectUri,
      code_verifier: PKCE.verifier,
      ...asB,
    });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await status('/api/open/v1/userinfo', exchanged.accessToken)).toBe(200);

    // A's refresh token, rotated past the grace window, then also expired, presented by B.
    const rotated = await refresh(a, exchanged.refreshToken);
    expect(rotated.status).toBe(200);
    const old = server.ctx.db('oauth_tokens').where({ refresh_token_hash: hashToken(exchanged.refreshToken) });
    await old.clone().update({ rotated_at: Date.now() - 60_000 });
    expect(
      await tokenRequest({ grant_type: 'refresh_token', refresh_token: exchanged.refreshToken, ...asB }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await old.clone().update({ refresh_expires_at: Date.now() - 1000 });
    expect(
      await tokenRequest({ grant_type: 'refresh_token', refresh_token: exchanged.refreshToken, ...asB }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // A's grant stands: its newest pair works and carries it on.
    expect(await status('/api/open/v1/userinfo', rotated.body.access_token!)).toBe(200);
    expect((await refresh(a, rotated.body.refresh_token!)).status).toBe(200);
  });

  it('answers a malformed Basic header with 400 invalid_request at the token and revocation endpoints', async () => {
    const noColon = { authorization: `Basic ${Buffer.from('no-colon-here').toString('base64')}` };
    const badEscape = { authorization: basic('app_x', 'bad%zz') };
    for (const headers of [noColon, badEscape]) {
      expect(await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'ghr_x' }, headers)).toMatchObject({
        status: 400,
        body: { error: 'invalid_request' },
      });
      expect(await post('/api/open/oauth/revoke', { token: 'gho_x' }, headers)).toMatchObject({
        status: 400,
        body: { error: 'invalid_request' },
      });
    }
  });

  it('accepts at the revocation endpoint what the token endpoint accepts: Basic with the same client_id in the body; refuses a second method', async () => {
    const { f, accessToken } = await aGrant();
    const other = await createFixture(server.ctx.db);
    const mismatch = await post(
      '/api/open/oauth/revoke',
      { token: accessToken, client_id: other.clientId },
      { authorization: basic(f.clientId, f.clientSecret) },
    );
    expect(mismatch).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await status('/api/open/v1/userinfo', accessToken)).toBe(200);
    const same = await post(
      '/api/open/oauth/revoke',
      { token: accessToken, client_id: f.clientId },
      { authorization: basic(f.clientId, f.clientSecret) },
    );
    expect(same.status).toBe(200);
    expect(await status('/api/open/v1/userinfo', accessToken)).toBe(401);
  });
});
