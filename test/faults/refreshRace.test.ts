// A refresh token presented again (RFC 9700 4.14.2 reuse detection, with a grace window as Ory
// Hydra's graceful refresh). Within REFRESH_REUSE_GRACE_SECONDS of its rotation a refresh token
// may be presented again, by a client whose answer was lost or by two concurrent requests: each
// gets the same successor pair, and the grant stands with one live chain. After the
// window, its reuse revokes the chain (proxy tokens included): whoever holds it may be an attacker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/shared/crypto.ts';
import { testDialects } from '../support/db.ts';
import { createFixture, discover, obtainTokens, type Fixture } from '../support/oauthFlow.ts';
import { refreshAt, userinfoStatus } from '../support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Pair {
  access_token: string;
  refresh_token: string;
}

describe.each(testDialects())('a refresh token presented again (%s)', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());

  const refresh = (f: Fixture, refreshToken: string) => refreshAt(server.baseUrl, f, refreshToken);
  const userinfo = (accessToken: string) => userinfoStatus(server.baseUrl, accessToken);
  async function aGrant(): Promise<{ f: Fixture; tokens: Pair }> {
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, 'user_info');
    return { f, tokens: tokens as Pair };
  }
  /** Moves a refresh token's rotation back in time, instead of sleeping through the window. */
  const rotatedSecondsAgo = (refreshToken: string, seconds: number) =>
    server.ctx
      .db('oauth_tokens')
      .where({ refresh_token_hash: hashToken(refreshToken) })
      .update({ rotated_at: Date.now() - seconds * 1000 });

  it('answers both of two concurrent refreshes with one token within the grace window with the same pair, leaving one live chain; the grant stands (issue 30)', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { f, tokens } = await aGrant();
      const answers = await Promise.all([refresh(f, tokens.refresh_token), refresh(f, tokens.refresh_token)]);
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answers[0]!.body).toEqual(answers[1]!.body);
      expect(await userinfo(answers[0]!.body.access_token!)).toBe(200);
      expect((await refresh(f, answers[0]!.body.refresh_token!)).status).toBe(200);
    }
  }, 60_000);

  it('answers a retried refresh (the first answer was lost) with the same pair, without revoking the grant', async () => {
    const { f, tokens } = await aGrant();
    const lost = await refresh(f, tokens.refresh_token);
    expect(lost.status).toBe(200);
    await rotatedSecondsAgo(tokens.refresh_token, 29); // still inside the default 30 s
    const retried = await refresh(f, tokens.refresh_token);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual(lost.body);
    expect(await userinfo(retried.body.access_token!)).toBe(200);
    expect((await refresh(f, retried.body.refresh_token!)).status).toBe(200);
  });

  it('revokes the whole grant when a rotated refresh token comes back after the window', async () => {
    const { f, tokens } = await aGrant();
    const next = await refresh(f, tokens.refresh_token);
    expect(next.status).toBe(200);
    await rotatedSecondsAgo(tokens.refresh_token, 31);
    const reuse = await refresh(f, tokens.refresh_token);
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The grant is gone: the pair issued by the legitimate refresh dies with it.
    expect(await userinfo(next.body.access_token!)).toBe(401);
    expect((await refresh(f, next.body.refresh_token!)).status).toBe(400);
  });
});

describe('REFRESH_REUSE_GRACE_SECONDS=0 (no grace)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { REFRESH_REUSE_GRACE_SECONDS: '0' } });
  });
  afterAll(() => server?.close());

  it('revokes the grant on any second use, however close together', async () => {
    const f = await createFixture(server.ctx.db);
    const as = await discover(server.baseUrl);
    const { tokens } = await obtainTokens(server.baseUrl, as, f, 'user_info');
    const post = (refreshToken: string) =>
      fetch(as.token_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: f.clientId,
          client_secret: f.clientSecret,
        }),
      });
    const first = await post(tokens.refresh_token!);
    expect(first.status).toBe(200);
    const pair = (await first.json()) as Pair;
    expect((await post(tokens.refresh_token!)).status).toBe(400);
    expect(
      (
        await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
          headers: { authorization: `Bearer ${pair.access_token}` },
        })
      ).status,
    ).toBe(401);
  });
});
