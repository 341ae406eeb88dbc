import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newToken } from '../shared/crypto.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { testDialects } from '../../test/support/db.ts';
import { createFixture, discover, obtainTokens, type Fixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import type { TokenForm } from './grants/form.ts';
import { GRANT_TYPES } from './grants/registry.ts';
import { TokenModel } from './model.ts';

// A grant that does not descend from a code (device flow, token exchange) stores its pairs without
// an authorization row (migration 0026), through TokenModel#grantedDirectly and saveToken: the
// pair authenticates, its refresh token rotates (with the grace window's replay and reuse
// detection), and revocation ends it, on each store.

describe.each(testDialects())('a grant without an authorization, on %s', (dialect) => {
  let server: TestServer;
  let f: Fixture;
  let applicationId: number;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
    f = await createFixture(server.ctx.db);
    applicationId = Number((await server.ctx.db('applications').where({ client_id: f.clientId }).first('id')).id);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Stores a pair as a grant type that does not descend from a code would: no authorization row. */
  async function grantDirectly(scope = 'user_info'): Promise<{ accessToken: string; refreshToken: string }> {
    const model = new TokenModel(server.ctx, { grant_type: 'refresh_token' } as TokenForm, GRANT_TYPES);
    model.grantedDirectly({
      userId: f.userId,
      applicationId,
      clientId: f.clientId,
      idTokenAlg: 'RS256',
      scope,
      authTime: null,
    });
    const client = { id: f.clientId, grants: GRANT_TYPES };
    const user = { id: f.userId };
    const pair = {
      accessToken: newToken('gho'),
      refreshToken: newToken('ghr'),
      accessTokenExpiresAt: new Date(Date.now() + 3_600_000),
      refreshTokenExpiresAt: new Date(Date.now() + 86_400_000),
      scope: scope.split(' '),
      client,
      user,
    };
    const saved = await model.saveToken(pair, client, user);
    return { accessToken: saved!.accessToken, refreshToken: saved!.refreshToken! };
  }

  const refresh = async (refreshToken: string) => {
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { access_token: string; refresh_token: string; error?: string },
    };
  };
  const userinfo = async (accessToken: string) =>
    (await fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } }))
      .status;

  it('is stored with its user and client and no authorization, and authenticates', async () => {
    const { accessToken } = await grantDirectly();
    expect(
      Number((await server.ctx.db('authorizations').where({ user_id: f.userId }).count({ n: '*' }).first())!.n),
    ).toBe(0);
    const rows = await server.ctx
      .db('oauth_tokens')
      .where({ user_id: f.userId })
      .select('authorization_id', 'code_id', 'application_id');
    expect(rows.map((r: Record<string, unknown>) => [r.authorization_id, r.code_id, Number(r.application_id)])).toEqual(
      [[null, null, applicationId]],
    );
    const res = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { login: string }).login).toBe(f.login);
  });

  it('rotates: the successor is stored without an authorization too, a retry within the window gets the same pair, an older generation revokes the grant but not a code-descended one', async () => {
    const first = await grantDirectly();
    const second = await refresh(first.refreshToken);
    expect(second.status).toBe(200);
    expect(await userinfo(second.body.access_token)).toBe(200);
    const successor = await server.ctx
      .db('oauth_tokens')
      .whereNotNull('rotated_from_id')
      .where({ user_id: f.userId })
      .first('authorization_id', 'application_id');
    expect([successor.authorization_id, Number(successor.application_id)]).toEqual([null, applicationId]);

    // A retry of the first refresh within the grace window: the same pair, nothing revoked.
    const retried = await refresh(first.refreshToken);
    expect(retried.status).toBe(200);
    expect([retried.body.access_token, retried.body.refresh_token]).toEqual([
      second.body.access_token,
      second.body.refresh_token,
    ]);

    // A code-descended grant of the same user and client stands through what follows.
    const { tokens: coded } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, 'user_info');

    const third = await refresh(second.body.refresh_token);
    expect(third.status).toBe(200);
    // The first token again, after its successor was rotated: reuse; the grant's tokens go.
    const reused = await refresh(first.refreshToken);
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    const afterReuse = await refresh(third.body.refresh_token);
    expect([afterReuse.status, afterReuse.body.error]).toEqual([400, 'invalid_grant']);
    expect(await userinfo(third.body.access_token)).toBe(401);

    expect(await userinfo(coded.access_token)).toBe(200);
    expect((await refresh(coded.refresh_token!)).status).toBe(200);
  });

  it("is revoked at the revocation endpoint (RFC 7009), with the rest of the user's grant to the client", async () => {
    const pair = await grantDirectly();
    const res = await fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: pair.refreshToken,
        token_type_hint: 'refresh_token',
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });
    expect(res.status).toBe(200);
    const after = await refresh(pair.refreshToken);
    expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
    expect(await userinfo(pair.accessToken)).toBe(401);
  });

  it('gets no proxy token: a proxy token stands on an authorization, which this grant has none of', async () => {
    const { accessToken } = await grantDirectly('user_info api_key');
    const key = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'direct',
      usageScenario: 'paid',
    });
    const res = await fetch(`${server.baseUrl}/api/open/v1/${f.login}/tokens/${key.record.id}`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
  });
});
