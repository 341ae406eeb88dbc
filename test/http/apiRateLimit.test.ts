import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { createFixture, discover, obtainTokens } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { testDialects } from '../support/db.ts';

const LIMIT = 4;

describe.each(testDialects())('per-token rate limit of the APIs (%s)', (dialect) => {
  let a: TestServer;
  let b: TestServer;
  let keys: string[];

  beforeAll(async () => {
    const env = { API_RATE_LIMIT_PER_MINUTE: String(LIMIT) };
    a = await startTestServer({ dialect, env });
    // A second API process on the same database.
    b = await startTestServer({ dialect, env, databaseUrl: a.databaseUrl });
    // No flush once a second: each process shares its counts only when a test flushes it, so what
    // a process knows at each step does not depend on where the clock ticks.
    a.rateLimiters.api.stop();
    b.rateLimiters.api.stop();
    const user = await createUser(a.ctx, { login: 'rita', password: 'test-password-1' });
    keys = [];
    for (const name of ['one', 'two', 'three']) {
      keys.push(
        (
          await createAccessToken(a.ctx, {
            userId: user.id,
            namespace: 'rita',
            name,
            usageScenario: 'trial',
            permissions: ['workflows'],
          })
        ).token,
      );
    }
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const list = (server: TestServer, key: string) =>
    fetch(`${server.baseUrl}/api/workflows`, { headers: { Authorization: `Bearer ${key}` } });

  it('answers 429 problem+json with Retry-After once a token spends its allowance; other tokens are unaffected', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await list(a, keys[0]!)).status).toBe(200);
    const refused = await list(a, keys[0]!);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await list(a, keys[1]!)).status).toBe(200);
  });

  it('shares one allowance between API processes once their counts are flushed', async () => {
    for (let i = 0; i < LIMIT - 1; i++) expect((await list(a, keys[2]!)).status).toBe(200);
    await a.rateLimiters.api.flush();
    expect((await list(b, keys[2]!)).status).toBe(200); // the last hit of the allowance
    // b learns the shared count when it flushes (in service: once a second): from then on, refused.
    await b.rateLimiters.api.flush();
    expect((await list(b, keys[2]!)).status).toBe(429);
    expect((await list(a, keys[2]!)).status).toBe(200); // a has not flushed since: it may overshoot by one interval
    await a.rateLimiters.api.flush();
    expect((await list(a, keys[2]!)).status).toBe(429);
  });

  it("counts an OAuth access token's reads of the workflows API against its grant's allowance", async () => {
    const f = await createFixture(a.ctx.db);
    const { tokens } = await obtainTokens(a.baseUrl, await discover(a.baseUrl), f, 'workflows:read');
    for (let i = 0; i < LIMIT; i++) expect((await list(a, tokens.access_token)).status).toBe(200);
    const refused = await list(a, tokens.access_token);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
  });

  it('answers the gateway in the OpenAI error shape when limited', async () => {
    const call = () =>
      fetch(`${a.baseUrl}/serverless/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${keys[1]!}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
      });
    let res = await call();
    while (res.status === 200) res = await call();
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: { type: 'rate_limit_error' } });
  });
});
