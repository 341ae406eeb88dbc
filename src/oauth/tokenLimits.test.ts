import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// The token and revocation endpoints count requests per claimed client AND source address: a
// stranger who sends requests with a client's public client_id (and a wrong secret) exhausts only
// their own allowance, never the real client's (RFC 6749 10.10: slow guessing, no lockouts). Failed
// client authentications also count per address alone, so made-up client ids buy no fresh allowance.

describe('token endpoint limits per client and address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { TOKEN_RATE_LIMIT_PER_MINUTE: '3', TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE: '5', TRUST_PROXY: 'true' },
    });
    // One process counts exactly; the once-a-second flush to the shared row could briefly hide
    // in-flight hits (documented overshoot) and make the count here depend on timing.
    server.rateLimiters.token.stop();
    server.rateLimiters.tokenFailures.stop();
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

  it('limits failed client authentications per address whatever client id they name: rotating made-up ids does not evade it', async () => {
    const f = await createFixture(server.ctx.db);
    const rotator = '203.0.113.77';
    const token = (address: string, clientId: string, clientSecret: string) =>
      fetch(`${server.baseUrl}/api/open/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'ghr_unknown',
          client_id: clientId,
          client_secret: clientSecret,
        }),
      });
    // Five failures (the limit), each under a fresh client id (unknown ones, then the victim's with
    // a guess), on both endpoints: each id's own allowance (3) is never reached.
    for (let i = 0; i < 4; i += 1) expect((await token(rotator, `app_fake${i}`, 'cs_guess')).status).toBe(401);
    expect((await revoke(rotator, f.clientId, 'cs_guess')).status).toBe(401);
    // The sixth is refused before any secret is checked, even with a new id or the right secret.
    for (const [clientId, secret] of [
      ['app_fake-next', 'cs_guess'],
      [f.clientId, f.clientSecret],
    ] as const) {
      const refused = await token(rotator, clientId, secret);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ error: 'slow_down' });
    }
    // Successful authentications are not failures: the real client from a fresh address is answered,
    // past the failure limit's count, while the rotator stays refused.
    for (let i = 0; i < 3; i += 1) expect((await token('198.51.100.30', f.clientId, f.clientSecret)).status).toBe(400); // invalid_grant, after authenticating
    expect((await revoke('198.51.100.31', f.clientId, f.clientSecret)).status).toBe(200);
    expect((await token(rotator, 'app_fake-later', 'cs_guess')).status).toBe(429);
  });

  it('limits introspection as the token endpoint: per client and address, and failed authentications per address', async () => {
    const f = await createFixture(server.ctx.db);
    const introspect = (address: string, clientId: string, clientSecret: string) =>
      fetch(`${server.baseUrl}/api/open/oauth/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({ token: 'gho_unknown', client_id: clientId, client_secret: clientSecret }),
      });
    const resourceServer = '198.51.100.40';
    for (let i = 0; i < 3; i += 1)
      expect((await introspect(resourceServer, f.clientId, f.clientSecret)).status).toBe(200);
    const limited = await introspect(resourceServer, f.clientId, f.clientSecret);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ error: 'slow_down' });
    expect((await introspect('198.51.100.41', f.clientId, f.clientSecret)).status).toBe(200);

    const guesser = '203.0.113.140';
    for (let i = 0; i < 5; i += 1) expect((await introspect(guesser, `app_guess${i}`, 'cs_guess')).status).toBe(401);
    expect((await introspect(guesser, f.clientId, f.clientSecret)).status).toBe(429);
  });

  it('limits pushed authorization requests as token requests: per client and address, and failed authentications per address', async () => {
    const f = await createFixture(server.ctx.db);
    const push = (address: string, clientSecret: string, clientId = f.clientId) =>
      fetch(`${server.baseUrl}/api/open/oauth/par`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({
          response_type: 'code',
          redirect_uri: f.redirectUri,
          scope: 'user_info',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
          client_id: clientId,
          client_secret: clientSecret,
        }),
      });
    for (let i = 0; i < 3; i += 1) expect((await push('198.51.100.40', f.clientSecret)).status).toBe(201);
    const limited = await push('198.51.100.40', f.clientSecret);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ error: 'slow_down' });
    expect((await push('198.51.100.41', f.clientSecret)).status).toBe(201);

    const guesser = '203.0.113.88';
    for (let i = 0; i < 5; i += 1) expect((await push(guesser, 'cs_guess', `app_guess${i}`)).status).toBe(401);
    expect((await push(guesser, f.clientSecret)).status).toBe(429);
  });
});
