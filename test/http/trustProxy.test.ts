import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

// TRUST_PROXY as a hop count (docs/operating.md "Configuration"): the client's address is the one the trusted
// proxy appended, the rightmost of X-Forwarded-For, never one the client wrote itself. So a client
// that forges a fresh leftmost address on every request stays under one per-address limit of
// failed client authentications (RFC 6749 10.10), where `true` (refused in production) let 150
// forged addresses through without a 429.

describe('TRUST_PROXY with a hop count', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { TRUST_PROXY: '1', TOKEN_FAILED_AUTH_LIMIT_PER_MINUTE: '5' } });
    // One process counts exactly (see src/oauth/tokenLimits.test.ts).
    server.rateLimiters.token.stop();
    server.rateLimiters.tokenFailures.stop();
  });
  afterAll(async () => {
    await server?.close();
  });

  // What the one proxy in front of the service sends: the client's X-Forwarded-For, with the
  // address it saw the request come from appended.
  const token = (forwardedFor: string) =>
    fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'ghr_unknown',
        client_id: 'app_nobody',
        client_secret: 'cs_guess',
      }),
    });

  it('a forged leftmost X-Forwarded-For does not evade the failed-auth limit per address', async () => {
    const attacker = '203.0.113.66';
    for (let i = 0; i < 5; i += 1) expect((await token(`198.18.${i}.${i + 1}, ${attacker}`)).status).toBe(401);
    for (let i = 5; i < 8; i += 1) {
      const refused = await token(`198.18.${i}.${i + 1}, ${attacker}`);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: 'slow_down' });
    }
    // Another client (another address the proxy saw) has its own allowance.
    expect((await token(`198.18.0.1, 198.51.100.7`)).status).toBe(401);
  });
});
