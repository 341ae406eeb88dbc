import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { calculateJwkThumbprint } from 'jose';
import { dpopBoundRefresh, dpopKey } from '../../test/support/dpopProof.ts';
import { createFixture, discover, insecure, type Fixture } from '../../test/support/oauthFlow.ts';
import { freshGrant, refreshAt, userinfoStatus } from '../../test/support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { hashToken } from '../shared/crypto.ts';

// Introspection (RFC 7662) through a real server on each store: a live access or refresh token of
// the asking client is described; anything revoked, rotated, expired, unknown, malformed or of
// another client is `{active: false}` and nothing more; the client authenticates as at the token
// endpoint. No grace window here, so a rotated refresh token presented again is reuse at once.

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

describe.each(testDialects())('introspection (RFC 7662) (%s)', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect, env: { REFRESH_REUSE_GRACE_SECONDS: '0' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function introspect(
    f: Pick<Fixture, 'clientId' | 'clientSecret'>,
    form: Record<string, string>,
  ): Promise<Answer> {
    const res = await fetch(`${server.baseUrl}/api/open/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: f.clientId, client_secret: f.clientSecret, ...form }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  }

  const activeOf = async (f: Fixture, token: string, hint?: string) =>
    (await introspect(f, { token, ...(hint ? { token_type_hint: hint } : {}) })).body.active;

  it('describes a live access token and a live refresh token of the asking client, whatever the hint', async () => {
    const { f, accessToken, refreshToken } = await freshGrant(server);
    const now = Math.floor(Date.now() / 1000);
    const access = await introspect(f, { token: accessToken, token_type_hint: 'access_token' });
    expect(access.status).toBe(200);
    expect(access.headers.get('cache-control')).toBe('no-store');
    expect(access.body).toEqual({
      active: true,
      scope: 'user_info',
      client_id: f.clientId,
      username: f.login,
      token_type: 'Bearer',
      exp: expect.any(Number),
      iat: expect.any(Number),
      sub: String(f.userId),
      iss: server.baseUrl,
    });
    expect(Math.abs((access.body.iat as number) - now)).toBeLessThan(5);
    expect((access.body.exp as number) - (access.body.iat as number)).toBe(server.ctx.config.ACCESS_TOKEN_TTL_SECONDS);

    const refresh = await introspect(f, { token: refreshToken });
    expect(refresh.body).toEqual({
      active: true,
      scope: 'user_info',
      client_id: f.clientId,
      username: f.login,
      exp: expect.any(Number),
      iat: access.body.iat,
      sub: String(f.userId),
      iss: server.baseUrl,
    });
    expect((refresh.body.exp as number) - (refresh.body.iat as number)).toBe(
      server.ctx.config.REFRESH_TOKEN_TTL_SECONDS,
    );

    // RFC 7662 2.1: a wrong hint only costs a lookup.
    expect(await activeOf(f, accessToken, 'refresh_token')).toBe(true);
    expect(await activeOf(f, refreshToken, 'access_token')).toBe(true);
    expect((await introspect(f, { token: refreshToken, token_type_hint: 'access_token' })).body).toEqual(refresh.body);
  });

  it('describes a DPoP-bound access token with token_type DPoP and cnf.jkt (RFC 9449 6.2); its refresh token is not bound', async () => {
    const { f, refreshToken } = await freshGrant(server);
    const key = await dpopKey();
    const bound = await dpopBoundRefresh(server.baseUrl, f, refreshToken, key);
    const access = await introspect(f, { token: bound.access_token });
    expect(access.body).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: await calculateJwkThumbprint(key.publicJwk, 'sha256') },
    });
    const refresh = await introspect(f, { token: bound.refresh_token });
    expect(refresh.body.active).toBe(true);
    expect(refresh.body).not.toHaveProperty('cnf');
    expect(refresh.body).not.toHaveProperty('token_type');
    // Once revoked, nothing about its key is told.
    const revoked = await fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: f.clientId, client_secret: f.clientSecret, token: bound.access_token }),
    });
    expect(revoked.status).toBe(200);
    expect((await introspect(f, { token: bound.access_token })).body).toEqual({ active: false });
  });

  it('answers a rotated refresh token inactive and its successor active, and a reused chain inactive throughout', async () => {
    const { f, accessToken, refreshToken } = await freshGrant(server);
    const rotated = await refreshAt(server.baseUrl, f, refreshToken);
    expect(rotated.status).toBe(200);
    const next = rotated.body;
    expect(await activeOf(f, refreshToken)).toBe(false);
    expect(await activeOf(f, next.refresh_token!)).toBe(true);
    expect(await activeOf(f, next.access_token!)).toBe(true);
    // The first access token is as live as the API says it is.
    expect(await activeOf(f, accessToken)).toBe((await userinfoStatus(server.baseUrl, accessToken)) === 200);

    // Reuse of the rotated token (no grace window) revokes the chain: nothing of it is active.
    expect((await refreshAt(server.baseUrl, f, refreshToken)).status).toBe(400);
    for (const token of [refreshToken, accessToken, next.refresh_token!, next.access_token!]) {
      expect(await activeOf(f, token), token.slice(0, 8)).toBe(false);
    }
  });

  it('answers inactive at once after a revocation has answered', async () => {
    const { f, accessToken, refreshToken } = await freshGrant(server);
    // Used at the API first, so a process holds its principal in the lease.
    expect(await userinfoStatus(server.baseUrl, accessToken)).toBe(200);
    const revoked = await fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, client_id: f.clientId, client_secret: f.clientSecret }),
    });
    expect(revoked.status).toBe(200);
    expect(await activeOf(f, accessToken)).toBe(false);
    expect(await activeOf(f, refreshToken)).toBe(false);
    expect(await userinfoStatus(server.baseUrl, accessToken)).toBe(401);
  });

  it('answers expired access and refresh tokens inactive', async () => {
    const { f, accessToken, refreshToken } = await freshGrant(server);
    await server.ctx
      .db('oauth_tokens')
      .where({ access_token_hash: hashToken(accessToken) })
      .update({ access_expires_at: Date.now() - 1 });
    expect(await activeOf(f, accessToken)).toBe(false);
    expect(await activeOf(f, refreshToken)).toBe(true);
    await server.ctx
      .db('oauth_tokens')
      .where({ refresh_token_hash: hashToken(refreshToken) })
      .update({ refresh_expires_at: Date.now() - 1 });
    expect(await activeOf(f, refreshToken)).toBe(false);
  });

  it("answers another client's tokens, unknown, malformed and oversized values inactive and nothing more", async () => {
    const { f, accessToken, refreshToken } = await freshGrant(server);
    const other = await createFixture(server.ctx.db);
    for (const token of [
      accessToken,
      refreshToken,
      'gho_unknown0123456789',
      'ghr_unknown0123456789',
      'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl',
      'not a token',
      'gho_ünïcode',
      `gho_${'a'.repeat(20_000)}`,
    ]) {
      const answer = await introspect(other, { token });
      expect(answer.status, token.slice(0, 12)).toBe(200);
      expect(answer.body, token.slice(0, 12)).toEqual({ active: false });
    }
    // Looking did not harm them: they are still live for their own client.
    expect(await activeOf(f, accessToken)).toBe(true);
    expect(await activeOf(f, refreshToken)).toBe(true);
  });

  it('authenticates the client as the token endpoint does, and refuses a request without a token', async () => {
    const { f, accessToken } = await freshGrant(server);
    const wrong = await introspect({ clientId: f.clientId, clientSecret: 'cs_wrong' }, { token: accessToken });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(wrong.body.error).toBe('invalid_client');

    const anonymous = await fetch(`${server.baseUrl}/api/open/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: accessToken }),
    });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: string }).error).toBe('invalid_client');

    const basic = `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`;
    const viaBasic = await fetch(`${server.baseUrl}/api/open/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ token: accessToken }),
    });
    expect(((await viaBasic.json()) as { active: boolean }).active).toBe(true);
    const both = await fetch(`${server.baseUrl}/api/open/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ token: accessToken, client_secret: f.clientSecret }),
    });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { error: string }).error).toBe('invalid_request');

    const forms: Array<Record<string, string>> = [
      {},
      { token: '' },
      { token: accessToken, token_type_hint: 'id_token' },
    ];
    for (const form of forms) {
      const answer = await introspect(f, form);
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.error, JSON.stringify(form)).toBe('invalid_request');
    }
  });

  it('answers a client library (oauth4webapi) that finds the endpoint by discovery', async () => {
    const { f, accessToken } = await freshGrant(server);
    const as = await discover(server.baseUrl);
    const client = { client_id: f.clientId };
    const response = await oauth.introspectionRequest(
      as,
      client,
      oauth.ClientSecretBasic(f.clientSecret),
      accessToken,
      { additionalParameters: { token_type_hint: 'access_token' }, ...insecure },
    );
    const answer = await oauth.processIntrospectionResponse(as, client, response);
    expect(answer).toMatchObject({ active: true, client_id: f.clientId, username: f.login, token_type: 'Bearer' });
  });

  it('is published in both metadata documents', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(`${server.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({
        introspection_endpoint: `${server.baseUrl}/api/open/oauth/introspect`,
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    }
  });
});
