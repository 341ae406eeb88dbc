import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// The token and revocation endpoints count requests per claimed client AND source address: a
// stranger who sends requests with a client's public client_id (and a wrong secret) exhausts only
// their own allowance, never the real client's (RFC 6749 10.10: slow guessing, no lockouts).

describe('token endpoint limits per client and address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { TOKEN_RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'true' } });
    // One process counts exactly; the once-a-second flush to the shared row could briefly hide
    // in-flight hits (documented overshoot) and make the count here depend on timing.
    server.rateLimiters.token.stop();
  });
  afterAll(async () => {
    await server?.close();
  });

  const revoke = (address: string, clientId: string, clientSecret: string) =>
    fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
      body: new URLSearchParams({ token: 'gho_unknown', client_id: clientId, client_secret: clientSecret }),
    });

  it("a stranger's requests with a victim's client_id do not lock the real client out", async () => {
    const f = await createFixture(server.ctx.db);
    const stranger = '203.0.113.9';
    for (let i = 0; i < 3; i += 1) expect((await revoke(stranger, f.clientId, 'cs_guess')).status).toBe(401);
    const stopped = await revoke(stranger, f.clientId, 'cs_guess');
    expect(stopped.status).toBe(429);
    expect(await stopped.json()).toMatchObject({ error: 'slow_down' });

    // The real client, from its own address: authenticated and answered.
    expect((await revoke('198.51.100.20', f.clientId, f.clientSecret)).status).toBe(200);
  });
});
