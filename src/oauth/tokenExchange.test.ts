import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { createFixture, discover, obtainTokens, type Fixture } from '../../test/support/oauthFlow.ts';
import { refreshAt } from '../../test/support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken, deleteAccessToken } from '../accounts/accessTokens.ts';
import { createOrg } from '../accounts/orgs.ts';
import { hashToken } from '../shared/crypto.ts';
import { revocationLease } from '../shared/principalLease.ts';

// Token exchange (RFC 8693) at the token endpoint, through a real server on each store: an app
// trades its `api_key` access token and a namespace token's detail URL for that token's proxy
// token, the same JWT token detail issues, and everything that is not exactly that is refused in
// RFC 8693 2.2.2's words.

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

describe.each(testDialects())('token exchange (RFC 8693) (%s)', (dialect) => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    as = await discover(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A user with an app, a namespace token, and an access token of the app with `scope`. */
  async function setUp(scope = 'user_info api_key') {
    const f = await createFixture(server.ctx.db);
    const paid = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'Production key',
      usageScenario: 'paid',
    });
    const { tokens } = await obtainTokens(server.baseUrl, as, f, scope);
    return { f, paid, tokens, resource: detailUrl(f.login, paid.record.id) };
  }

  const detailUrl = (namespace: string, id: number) => `${server.baseUrl}/api/open/v1/${namespace}/tokens/${id}`;

  async function exchange(f: Fixture, fields: Record<string, string>): Promise<Answer> {
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: GRANT, client_id: f.clientId, client_secret: f.clientSecret, ...fields }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  }

  const fields = (subjectToken: string, resource: string, more: Record<string, string> = {}) => ({
    subject_token: subjectToken,
    subject_token_type: ACCESS,
    resource,
    ...more,
  });

  function chat(bearer: string) {
    return createApiClient(server.baseUrl, { bearer }).POST('/serverless/v1/chat/completions', {
      body: { model: 'echo', messages: [{ role: 'user', content: 'hello exchange' }] },
    });
  }

  it("answers the namespace token's proxy token, the JWT token detail issues, with RFC 8693 2.2.1's fields and no refresh token", async () => {
    const { f, paid, tokens, resource } = await setUp();
    const answer = await exchange(f, fields(tokens.access_token, resource, { requested_token_type: JWT }));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(answer.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'issued_token_type',
      'scope',
      'token_type',
    ]);
    expect(answer.body).toMatchObject({
      issued_token_type: JWT,
      token_type: 'Bearer',
      expires_in: 1800,
      scope: 'user_info api_key',
    });

    const jwt = String(answer.body.access_token);
    const jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(jwt, jwks, {
      issuer: server.baseUrl,
      audience: `${server.baseUrl}/serverless`,
      algorithms: ['ES256'],
    });
    expect(payload).toMatchObject({
      sub: String(f.userId),
      client_id: f.clientId,
      token_id: paid.record.id,
      namespace: f.login,
      usage_scenario: 'paid',
    });
    expect(payload.exp! - payload.iat!).toBe(answer.body.expires_in);

    // The same token as token detail's: same header, same claims (but its own jti).
    const detail = await createApiClient(server.baseUrl, { bearer: tokens.access_token }).GET(
      '/api/open/v1/{namespace}/tokens/{id}',
      { params: { path: { namespace: f.login, id: paid.record.id } } },
    );
    expect(detail.response.status).toBe(200);
    const fromDetail = await jwtVerify(detail.data!.proxy_access_token, jwks);
    expect(decodeProtectedHeader(jwt)).toEqual(decodeProtectedHeader(detail.data!.proxy_access_token));
    expect(Object.keys(payload).sort()).toEqual(Object.keys(fromDetail.payload).sort());
    expect({ ...payload, jti: 0, iat: 0, exp: 0 }).toEqual({ ...fromDetail.payload, jti: 0, iat: 0, exp: 0 });
    expect(detail.data!.expires_in).toBe(answer.body.expires_in);

    expect((await chat(jwt)).response.status).toBe(200);
    // The gateway's own audience is accepted as `audience`.
    const withAudience = await exchange(
      f,
      fields(tokens.access_token, resource, { audience: `${server.baseUrl}/serverless` }),
    );
    expect(withAudience.status).toBe(200);
  });

  it('leaves the code and refresh grants as they were: both answer a refresh token', async () => {
    const { f, tokens } = await setUp();
    expect(tokens.refresh_token).toMatch(/^ghr_/);
    const refreshed = await refreshAt(server.baseUrl, f, tokens.refresh_token!);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toMatch(/^ghr_/);
  });

  it('kills an exchanged JWT at once when the namespace token is deleted, and exchanges no more for it', async () => {
    const { f, paid, tokens, resource } = await setUp();
    const jwt = String((await exchange(f, fields(tokens.access_token, resource))).body.access_token);
    expect((await chat(jwt)).response.status).toBe(200);
    await deleteAccessToken(server.ctx, f.userId, paid.record.id);
    expect((await chat(jwt)).response.status).toBe(401);
    const again = await exchange(f, fields(tokens.access_token, resource));
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_target');
  });

  it('kills an exchanged JWT at once when the app is revoked, and refuses the replayed subject token with invalid_grant', async () => {
    const { f, tokens, resource } = await setUp();
    const jwt = String((await exchange(f, fields(tokens.access_token, resource))).body.access_token);
    const revoked = await fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.access_token, client_id: f.clientId, client_secret: f.clientSecret }),
    });
    expect(revoked.status).toBe(200);
    expect((await chat(jwt)).response.status).toBe(401);
    const replay = await exchange(f, fields(tokens.access_token, resource));
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
  });

  it("refuses a subject token of another client, and another client's credentials, without revealing anything", async () => {
    const { f, tokens, resource } = await setUp();
    const other = await createFixture(server.ctx.db);
    const foreign = await exchange(other, fields(tokens.access_token, resource));
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('invalid_grant');
    const wrongSecret = await exchange({ ...f, clientSecret: 'cs_wrong' }, fields(tokens.access_token, resource));
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(wrongSecret.body.error).toBe('invalid_client');
    // The subject token still works for its own client.
    expect((await exchange(f, fields(tokens.access_token, resource))).status).toBe(200);
  });

  it('refuses a subject token without api_key, expired, unknown, a refresh token or a JWT with invalid_grant', async () => {
    const narrow = await setUp('user_info');
    expect((await exchange(narrow.f, fields(narrow.tokens.access_token, narrow.resource))).body.error).toBe(
      'invalid_grant',
    );

    const { f, tokens, resource } = await setUp();
    const jwt = String((await exchange(f, fields(tokens.access_token, resource))).body.access_token);
    for (const subject of [tokens.refresh_token!, jwt, 'gho_unknown0123456789', `gho_${'a'.repeat(20_000)}`]) {
      const answer = await exchange(f, fields(subject, resource));
      expect(answer.status, subject.slice(0, 12)).toBe(400);
      expect(answer.body.error, subject.slice(0, 12)).toBe('invalid_grant');
    }

    // Expired: a fresh access token (never presented, so no process holds it) past its expiry.
    const fresh = await setUp();
    await server.ctx
      .db('oauth_tokens')
      .where({ access_token_hash: hashToken(fresh.tokens.access_token) })
      .update({ access_expires_at: Date.now() - 1 });
    const expired = await exchange(fresh.f, fields(fresh.tokens.access_token, fresh.resource));
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('invalid_grant');
  });

  it("refuses a resource that is not one of the user's namespace tokens with invalid_target", async () => {
    const { f, paid, tokens } = await setUp();
    const stranger = await createFixture(server.ctx.db);
    const theirs = await createAccessToken(server.ctx, {
      userId: stranger.userId,
      namespace: stranger.login,
      name: 'Not yours',
      usageScenario: 'trial',
    });
    const org = await createOrg(server.ctx, {
      namespace: `org${Date.now().toString(36)}x`,
      name: 'Their org',
      ownerLogin: stranger.login,
    });
    const expiring = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'Old',
      usageScenario: 'paid',
    });
    await server.ctx
      .db('access_tokens')
      .where({ id: expiring.record.id })
      .update({ expires_at: Date.now() - 1 });
    await revocationLease.settle();
    const id = paid.record.id;
    const targets = [
      detailUrl(stranger.login, theirs.record.id),
      detailUrl(f.login, theirs.record.id),
      detailUrl(org.namespace, id),
      detailUrl(f.login, expiring.record.id),
      detailUrl(f.login, 2147483647),
      detailUrl(f.login, 99999999999),
      detailUrl(f.login, 0),
      `${detailUrl(f.login, id)}/`,
      `${detailUrl(f.login, id)}?x=1`,
      `${detailUrl(f.login, id)}#x`,
      `https://elsewhere.example/api/open/v1/${f.login}/tokens/${id}`,
      `${server.baseUrl}/api/open/v1/${f.login}/tokens`,
      `${server.baseUrl}/api/open/v1/${encodeURIComponent('a/b')}/tokens/${id}`,
      `${server.baseUrl}/api/open/v1/${'a'.repeat(65)}/tokens/${id}`,
      'not a url',
      `${server.baseUrl}/serverless`,
    ];
    for (const resource of targets) {
      const answer = await exchange(f, fields(tokens.access_token, resource));
      expect(answer.status, resource).toBe(400);
      expect(answer.body.error, resource).toBe('invalid_target');
    }
    const audience = await exchange(
      f,
      fields(tokens.access_token, detailUrl(f.login, id), { audience: 'https://elsewhere.example' }),
    );
    expect(audience.body.error).toBe('invalid_target');
  });

  it('refuses missing or unsupported parameters with invalid_request (RFC 8693 2.2.2)', async () => {
    const { f, tokens, resource } = await setUp();
    const cases: Array<Record<string, string>> = [
      { subject_token_type: ACCESS, resource },
      { subject_token: tokens.access_token, resource },
      {
        subject_token: tokens.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
        resource,
      },
      { subject_token: tokens.access_token, subject_token_type: JWT, resource },
      fields(tokens.access_token, resource, { requested_token_type: ACCESS }),
      { subject_token: tokens.access_token, subject_token_type: ACCESS },
      fields('gho_ünïcode', resource),
    ];
    for (const form of cases) {
      const answer = await exchange(f, form);
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.error, JSON.stringify(form)).toBe('invalid_request');
    }
  });
});
