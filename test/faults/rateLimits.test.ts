// Rate limits across processes: two app instances on one database share each limit through the
// `rate_limits` table (login: every hit, src/http/rateLimitStore.ts; the token endpoint: batched once
// a second, src/http/sharedRateLimiter.ts), so a client cannot multiply its allowance by
// spreading requests over the instances behind a load balancer.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseRateLimitStore } from '../../src/http/rateLimitStore.ts';
import { createKnex } from '../../src/db/knex.ts';
import { testDialects } from '../support/db.ts';
import { Browser, createFixture, logIn } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe.each(testDialects())('rate limits shared by two instances on one database (%s)', (dialect) => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    const env = { TOKEN_RATE_LIMIT_PER_MINUTE: '4' };
    a = await startTestServer({ dialect, env });
    b = await startTestServer({ databaseUrl: a.databaseUrl, env });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('counts failed logins for one account on both instances: the 11th, on the second instance, is 429 with Retry-After', async () => {
    const f = await createFixture(a.ctx.db);
    const browsers = [new Browser(a.baseUrl), new Browser(b.baseUrl)];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const res = await logIn(browsers[attempt % 2]!, f.login, 'wrong password');
      expect(res.status).toBe(401);
    }
    const limited = await logIn(browsers[1]!, f.login, 'wrong password');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    // Even the right password waits now, on either instance (per account and address, not per process).
    expect((await logIn(browsers[0]!, f.login, f.password)).status).toBe(429);
  });

  it('counts token requests per client on both instances: past the limit, either one answers 429 slow_down with Retry-After', async () => {
    const f = await createFixture(a.ctx.db);
    const request = (server: TestServer) =>
      fetch(`${server.baseUrl}/api/open/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'ghr_unknown',
          client_id: f.clientId,
          client_secret: f.clientSecret,
        }),
      });
    for (const server of [a, b, a, b]) expect((await request(server)).status).toBe(400);
    // Each instance adds its hits to the shared count and reads the others' once a second; do it now.
    await a.rateLimiters.token.flush();
    await b.rateLimiters.token.flush();
    await a.rateLimiters.token.flush();
    for (const server of [b, a]) {
      const res = await request(server);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await res.json()).toMatchObject({ error: 'slow_down' });
    }
  });

  it('loses no hit when two processes count one key at the same time (one atomic statement per hit)', async () => {
    const other = createKnex(a.databaseUrl, { poolMax: 5 });
    try {
      const stores = [databaseRateLimitStore(a.ctx.db, 'race:'), databaseRateLimitStore(other, 'race:')];
      for (const store of stores) await store.init?.({ windowMs: 60_000 } as never);
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % 2]!.increment('k')));
      expect(results.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      expect(new Set(results.map((r) => r.resetTime!.getTime())).size).toBe(1);
      await stores[0]!.decrement('k');
      expect((await stores[1]!.get!('k'))?.totalHits).toBe(39);
      await stores[1]!.resetKey('k');
      expect(await stores[0]!.get!('k')).toBeUndefined();
    } finally {
      await other.destroy();
    }
  });

  it('starts a new window at 1 once the old one has ended', async () => {
    const store = databaseRateLimitStore(a.ctx.db, 'window:');
    await store.init?.({ windowMs: 60_000 } as never);
    // The store's clock is Date.now(); move it instead of waiting (the timers stay real for I/O).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      expect((await store.increment('k')).totalHits).toBe(1);
      expect((await store.increment('k')).totalHits).toBe(2);
      vi.setSystemTime(Date.now() + 60_001);
      expect((await store.increment('k')).totalHits).toBe(1);
    } finally {
      vi.useRealTimers();
    }
    // Long keys (user input) are hashed to fit the column.
    expect((await store.increment('x'.repeat(500))).totalHits).toBe(1);
  });
});
