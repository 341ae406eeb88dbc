// Two concurrent refreshes with one refresh token. Defined outcome (RFC 9700 4.14.2 reuse
// detection): at most one request gets tokens, and because one refresh token was presented twice
// the whole authorization is revoked, whether the second request came in while the first was
// rotating (it loses the row-locked rotation) or just after (it finds the token rotated). The
// winner's fresh tokens die with the grant; the client has to ask the user again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../support/db.ts';
import { createFixture, discover, obtainTokens, type Fixture } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe.each(testDialects())('concurrent refreshes with one refresh token (%s)', (dialect) => {
  let server: TestServer;
  let tokenEndpoint: string;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    tokenEndpoint = (await discover(server.baseUrl)).token_endpoint!;
  });
  afterAll(() => server?.close());

  const refresh = (f: Fixture, refreshToken: string) =>
    fetch(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: f.clientId, client_secret: f.clientSecret }),
    });
  const userinfo = (accessToken: string) => fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });

  it('lets at most one of two concurrent refreshes succeed, then revokes the whole grant (reuse detection)', async () => {
    for (let round = 0; round < 5; round += 1) {
      const f = await createFixture(server.ctx.db);
      const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, 'user_info');
      const answers = await Promise.all([refresh(f, tokens.refresh_token!), refresh(f, tokens.refresh_token!)]);
      const bodies = (await Promise.all(answers.map((r) => r.json()))) as { access_token?: string; refresh_token?: string; error?: string }[];
      const winners = bodies.filter((_, i) => answers[i]!.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      for (const [i, body] of bodies.entries()) {
        if (answers[i]!.status !== 200) {
          expect(answers[i]!.status).toBe(400);
          expect(body.error).toBe('invalid_grant');
        }
      }
      // The grant is gone: the original access token, and the winner's new pair, are all refused.
      expect((await userinfo(tokens.access_token)).status).toBe(401);
      for (const winner of winners) {
        expect((await userinfo(winner.access_token!)).status).toBe(401);
        expect((await refresh(f, winner.refresh_token!)).status).toBe(400);
      }
    }
  }, 60_000);
});
