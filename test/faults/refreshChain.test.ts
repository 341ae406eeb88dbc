// A grant keeps one live chain that no stall can kill. Within the grace window only the
// immediate predecessor of the live refresh token may come back, and it gets the same successor
// pair each time, so a stolen token replayed many times forks nothing; older generations are
// reuse. The window runs from when the rotation was seen committed, so a refresh held longer than
// the window by a lock on its grant is still retried safely.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { hashToken } from '../../src/shared/crypto.ts';
import { testDialects } from '../support/db.ts';
import { createFixture, discover, obtainTokens, type Fixture } from '../support/oauthFlow.ts';
import {
  freshGrant,
  liveRefreshTokens as liveChainHeads,
  refreshAt,
  userinfoStatus,
} from '../support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Answer {
  status: number;
  body: { access_token?: string; refresh_token?: string; error?: string };
}

function tools(server: () => TestServer) {
  const refresh = (f: Fixture, refreshToken: string) => refreshAt(server().baseUrl, f, refreshToken);
  const userinfo = (accessToken: string) => userinfoStatus(server().baseUrl, accessToken);
  const aGrant = () => freshGrant(server());
  const liveRefreshTokens = (authorizationId: number) => liveChainHeads(server().ctx.db, authorizationId);
  return { refresh, userinfo, aGrant, liveRefreshTokens };
}

describe.each(testDialects())('one live chain per grant (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());
  const { refresh, userinfo, aGrant, liveRefreshTokens } = tools(() => server);

  it('forks nothing when one refresh token is presented 5 times within the window, one after another: each gets the same successor pair', async () => {
    const { f, refreshToken, authorizationId } = await aGrant();
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i += 1) answers.push(await refresh(f, refreshToken));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => `${a.body.access_token} ${a.body.refresh_token}`)).size).toBe(1);
    expect(await liveRefreshTokens(authorizationId)).toBe(1);
    const pair = answers[4]!;
    expect(await userinfo(pair.body.access_token!)).toBe(200);
    expect((await refresh(f, pair.body.refresh_token!)).status).toBe(200);
    expect(await liveRefreshTokens(authorizationId)).toBe(1);
  });

  it('forks nothing when one refresh token is presented 5 times at once: each gets the same successor pair', async () => {
    const { f, refreshToken, authorizationId } = await aGrant();
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(f, refreshToken)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => `${a.body.access_token} ${a.body.refresh_token}`)).size).toBe(1);
    expect(await liveRefreshTokens(authorizationId)).toBe(1);
    expect(await userinfo(answers[0]!.body.access_token!)).toBe(200);
    expect((await refresh(f, answers[0]!.body.refresh_token!)).status).toBe(200);
  });

  it('treats an older generation presented within the window as reuse: the chain is revoked', async () => {
    const { f, refreshToken, authorizationId } = await aGrant();
    const second = await refresh(f, refreshToken);
    const third = await refresh(f, second.body.refresh_token!);
    expect([second.status, third.status]).toEqual([200, 200]);
    expect(await refresh(f, refreshToken)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await userinfo(third.body.access_token!)).toBe(401);
    expect((await refresh(f, third.body.refresh_token!)).status).toBe(400);
    expect(await liveRefreshTokens(authorizationId)).toBe(0);
  });
});

describe.each(testDialects())('reuse revokes one chain, not every installation (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());
  const { refresh, userinfo } = tools(() => server);

  it("revokes the reused token's chain and its proxy tokens; the same app's other installation (another code under the remembered consent) keeps working", async () => {
    const f = await createFixture(server.ctx.db);
    const raw = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'key',
      usageScenario: 'paid',
    });
    const as = await discover(server.baseUrl);
    const install = async () => (await obtainTokens(server.baseUrl, as, f, 'user_info api_key')).tokens;
    const proxyToken = async (accessToken: string) => {
      const { data } = await createApiClient(server.baseUrl, { bearer: accessToken }).GET(
        '/api/open/v1/{namespace}/tokens/{id}',
        { params: { path: { namespace: f.login, id: raw.record.id } } },
      );
      return data!.proxy_access_token;
    };
    const gateway = async (bearer: string) =>
      (
        await createApiClient(server.baseUrl, { bearer }).POST('/serverless/v1/chat/completions', {
          body: { model: 'echo', messages: [{ role: 'user', content: 'hi' }] },
        })
      ).response.status;
    const grantOf = async (refreshToken: string) =>
      Number(
        (
          await server.ctx
            .db('oauth_tokens')
            .where({ refresh_token_hash: hashToken(refreshToken) })
            .first('authorization_id')
        ).authorization_id,
      );

    const laptop = await install();
    const phone = await install();
    expect(await grantOf(phone.refresh_token!)).toBe(await grantOf(laptop.refresh_token!));
    const laptopNext = await refresh(f, laptop.refresh_token!);
    const laptopProxy = await proxyToken(laptopNext.body.access_token!);
    const phoneProxy = await proxyToken(phone.access_token);
    expect([await gateway(laptopProxy), await gateway(phoneProxy)]).toEqual([200, 200]);

    // The laptop's first refresh token comes back after the window: reuse.
    await server.ctx
      .db('oauth_tokens')
      .where({ refresh_token_hash: hashToken(laptop.refresh_token!) })
      .update({ rotated_at: Date.now() - 31_000 });
    expect(await refresh(f, laptop.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await userinfo(laptopNext.body.access_token!)).toBe(401);
    expect((await refresh(f, laptopNext.body.refresh_token!)).status).toBe(400);
    expect(await gateway(laptopProxy)).toBe(401);
    // The phone's chain stands: its access token, its proxy token, its refresh.
    expect(await userinfo(phone.access_token)).toBe(200);
    expect(await gateway(phoneProxy)).toBe(200);
    expect((await refresh(f, phone.refresh_token!)).status).toBe(200);
  });
});

describe.each(testDialects())('REFRESH_REUSE_GRACE_SECONDS=1: the window runs from the commit (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect, env: { REFRESH_REUSE_GRACE_SECONDS: '1' } });
  });
  afterAll(() => server?.close());
  const { refresh, userinfo, aGrant } = tools(() => server);

  it('answers a retry with 200 and keeps the grant when the refresh waited on a lock of its grant for longer than the window', async () => {
    const { f, refreshToken, authorizationId } = await aGrant();
    const trx = await server.ctx.db.transaction();
    await trx('authorizations').where({ id: authorizationId }).forUpdate().first('id');
    let settled = false;
    const held = refresh(f, refreshToken).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 2_500));
    // The refresh is still waiting for the grant's row: the stall outlasts the window.
    expect(settled).toBe(false);
    await trx.commit();
    expect((await held).status).toBe(200);
    // Its answer was lost (the client timed out); it retries with the only token it has.
    const retried = await refresh(f, refreshToken);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(await userinfo(retried.body.access_token!)).toBe(200);
    expect((await refresh(f, retried.body.refresh_token!)).status).toBe(200);
  });
});
