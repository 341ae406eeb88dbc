// A stalled store must not log OAuth clients out. Clients with a short timeout retry a refresh with
// the only token they have while the store is paused; the server still runs the requests they
// abandoned once the store answers, in whatever order. Within the grace window every presentation
// of the rotated token gets the same successor pair, so whichever answer a client receives is live:
// the tests count the chains lost and the pairs handed out dead, and expect 0 of each.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as MetricsModule from '../../src/ops/metrics.ts';
import type * as StoreModule from '../../src/oauth/store.ts';
import { clearSealedPairs } from '../../src/oauth/chain.store.ts';
import { hashToken } from '../../src/shared/crypto.ts';
import { testDialects } from '../support/db.ts';
import type { Fixture } from '../support/oauthFlow.ts';
import {
  freshGrant,
  liveRefreshTokens as liveChainHeads,
  refreshAt,
  userinfoStatus,
} from '../support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Each refresh's read of its token, counted per token (the k-th presentation that reached the
 * store), and held while `hold` says so: the test sees when a request has reached the server, and
 * decides the order in which the requests it holds go on.
 */
const reads = vi.hoisted(() => ({
  arrivals: new Map<string, number>(),
  hold: null as null | ((hash: string, k: number) => Promise<void> | undefined),
  /** Token requests the server has finished (counted as its metrics count them), abandoned ones included. */
  finished: 0,
}));

vi.mock('../../src/ops/metrics.ts', async (importOriginal) => {
  const real = await importOriginal<typeof MetricsModule>();
  return {
    ...real,
    countTokenGrant: (...args: Parameters<typeof real.countTokenGrant>) => {
      reads.finished += 1;
      return real.countTokenGrant(...args);
    },
  };
});

vi.mock('../../src/oauth/store.ts', async (importOriginal) => {
  const real = await importOriginal<typeof StoreModule>();
  return {
    ...real,
    findTokenByRefreshHash: async (...args: Parameters<typeof real.findTokenByRefreshHash>) => {
      const [, hash] = args;
      const k = (reads.arrivals.get(hash) ?? 0) + 1;
      reads.arrivals.set(hash, k);
      await reads.hold?.(hash, k);
      return real.findTokenByRefreshHash(...args);
    },
  };
});

interface Answer {
  status: number;
  body: { access_token?: string; refresh_token?: string; error?: string };
}

function latch(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Until `ok()` holds, checked as the server makes progress (no time limit of its own: vitest's applies). */
async function until(ok: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 10));
}

describe.each(testDialects())('refresh retries through a stalled store (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(async () => {
    reads.hold = null;
    await server?.close();
  });

  /** A refresh; `signal` aborts it as a client's timeout does (the server goes on with it). */
  const refresh = (f: Fixture, token: string, signal?: AbortSignal) => refreshAt(server.baseUrl, f, token, signal);
  const userinfo = (accessToken: string) => userinfoStatus(server.baseUrl, accessToken);
  const aGrant = () => freshGrant(server);
  type Grant = Awaited<ReturnType<typeof aGrant>>;
  const liveRefreshTokens = (authorizationId: number) => liveChainHeads(server.ctx.db, authorizationId);
  const chainRevoked = async (g: Grant) =>
    (await server.ctx.db('oauth_codes').where({ id: g.codeId }).first('chain_revoked_at')).chain_revoked_at !== null ||
    (await server.ctx.db('authorizations').where({ id: g.authorizationId }).first('revoked_at')).revoked_at !== null;
  /** Whether a pair a client received works: its access token is accepted and its refresh token refreshes (checked last: it rotates). */
  const pairIsLive = async (f: Fixture, pair: Answer) =>
    pair.status === 200 &&
    (await userinfo(pair.body.access_token!)) === 200 &&
    (await refresh(f, pair.body.refresh_token!)).status === 200;

  /**
   * One client's presentation that it gives up on: sent, seen to reach the server's read of the
   * token, then aborted as a client timeout does. The server goes on with it when the store answers.
   */
  const abandoned = async (g: Grant, k: number): Promise<{ sent: Promise<unknown> }> => {
    const timeout = new AbortController();
    const sent = refresh(g.f, g.refreshToken, timeout.signal).catch(() => undefined);
    await until(() => (reads.arrivals.get(hashToken(g.refreshToken)) ?? 0) >= k);
    timeout.abort();
    return { sent };
  };

  it('the store paused (its token table locked): 12 clients each time out twice and retry; every answer received is live, and each grant keeps one chain', async () => {
    const grants: Grant[] = [];
    for (let i = 0; i < 12; i += 1) grants.push(await aGrant());
    const db = server.ctx.db;
    // The pause: a transaction that holds the token table, so every refresh's first read waits.
    const pause = await db.transaction();
    if (dialect === 'pg') await pause.raw('LOCK TABLE oauth_tokens IN ACCESS EXCLUSIVE MODE');
    else await pause.raw('LOCK TABLES oauth_tokens WRITE, oauth_codes WRITE, authorizations WRITE');
    const late: Promise<unknown>[] = [];
    const finishedBefore = reads.finished;
    let kept: Promise<Answer>[];
    try {
      for (const g of grants) late.push((await abandoned(g, 1)).sent, (await abandoned(g, 2)).sent);
      kept = grants.map((g) => refresh(g.f, g.refreshToken));
      await until(() => grants.every((g) => reads.arrivals.get(hashToken(g.refreshToken)) === 3));
    } finally {
      if (dialect === 'mysql') await pause.raw('UNLOCK TABLES');
      await pause.commit();
    }
    const answers = await Promise.all(kept);
    await Promise.all(late);
    // Every abandoned request has run to its end too (its answer went nowhere).
    await until(() => reads.finished === finishedBefore + grants.length * 3);

    let deadPairs = 0;
    let chainsLost = 0;
    for (const [i, g] of grants.entries()) {
      expect(answers[i]!.status, JSON.stringify(answers[i]!.body)).toBe(200);
      if (!(await pairIsLive(g.f, answers[i]!))) deadPairs += 1;
      if (await chainRevoked(g)) chainsLost += 1;
      expect(await liveRefreshTokens(g.authorizationId)).toBe(1);
    }
    expect({ deadPairs, chainsLost }).toEqual({ deadPairs: 0, chainsLost: 0 });
  }, 120_000);

  it('a retry sent within the window that the store holds up until after it is still a retry: the same pair, the chain stands', async () => {
    const g = await aGrant();
    const hash = hashToken(g.refreshToken);
    const first = await refresh(g.f, g.refreshToken);
    expect(first.status).toBe(200);
    const gate = latch();
    const arrived = (reads.arrivals.get(hash) ?? 0) + 1;
    reads.hold = (h, k) => (h === hash && k === arrived ? gate.promise : undefined);
    try {
      const retry = refresh(g.f, g.refreshToken);
      await until(() => reads.arrivals.get(hash) === arrived);
      // The rotation is now 29.5 s old (the window is 30 s): the retry was sent within it. Held
      // until the rotation is more than 30.5 s old, it runs after the window.
      const rotatedAt = Date.now() - 29_500;
      await server.ctx.db('oauth_tokens').where({ refresh_token_hash: hash }).update({ rotated_at: rotatedAt });
      await until(() => Date.now() - rotatedAt > 30_500);
      gate.open();
      const answer = await retry;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toEqual(first.body);
      expect(await chainRevoked(g)).toBe(false);
      expect(await pairIsLive(g.f, answer)).toBe(true);
    } finally {
      reads.hold = null;
      gate.open();
    }
  });

  it("keeps the successor's raw pair at rest only sealed, and only for the window: cleared by the sweep after it, and by a revocation", async () => {
    const db = server.ctx.db;
    const g = await aGrant();
    const pair = await refresh(g.f, g.refreshToken);
    expect(pair.status).toBe(200);
    const successor = () =>
      db('oauth_tokens')
        .where({ refresh_token_hash: hashToken(pair.body.refresh_token!) })
        .first('sealed_pair', 'sealed_until');
    const kept = await successor();
    expect(String(kept.sealed_pair)).toMatch(/^sealed:v1:/);
    for (const raw of [pair.body.access_token!, pair.body.refresh_token!])
      expect(String(kept.sealed_pair)).not.toContain(raw);
    // Not yet past its window: the sweep keeps it; past it, the sweep clears it.
    expect(await clearSealedPairs(db, Date.now())).toBe(0);
    await clearSealedPairs(db, Number(kept.sealed_until) + 1);
    expect(await successor()).toMatchObject({ sealed_pair: null, sealed_until: null });
    // Cleared, the pair is not answered again: the retry is refused, and revokes nothing.
    expect((await refresh(g.f, g.refreshToken)).status).toBe(400);
    expect(await userinfo(pair.body.access_token!)).toBe(200);

    // A revocation (RFC 7009, of the access token) clears what its grant kept sealed.
    const other = await aGrant();
    const next = await refresh(other.f, other.refreshToken);
    const revocation = await fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: next.body.access_token!,
        client_id: other.f.clientId,
        client_secret: other.f.clientSecret,
      }),
    });
    expect(revocation.status).toBe(200);
    const sealed = await db('oauth_tokens')
      .where({ authorization_id: other.authorizationId })
      .whereNotNull('sealed_pair')
      .count({ n: '*' });
    expect(Number(sealed[0]!.n)).toBe(0);
  });

  /** The orders in which a client's three presentations (two abandoned, the third kept) run once the store answers. */
  const ORDERS: Array<readonly [1 | 2 | 3, 1 | 2 | 3, 1 | 2 | 3]> = [
    [1, 2, 3],
    [1, 3, 2],
    [2, 1, 3],
    [2, 3, 1],
    [3, 1, 2],
    [3, 2, 1],
  ];

  it.each(
    ORDERS.flatMap((order) => [
      { order, usedFirst: false },
      { order, usedFirst: true },
    ]),
  )(
    'abandoned and retried presentations run in the order $order (the client uses its pair before the late ones run: $usedFirst): the answer is live and the chain stands',
    async ({ order, usedFirst }) => {
      const g = await aGrant();
      const hash = hashToken(g.refreshToken);
      const gates = new Map([1, 2, 3].map((k) => [k, latch()]));
      reads.hold = (h, k) => (h === hash ? gates.get(k)?.promise : undefined);
      try {
        const late = [(await abandoned(g, 1)).sent, (await abandoned(g, 2)).sent];
        const kept = refresh(g.f, g.refreshToken);
        await until(() => reads.arrivals.get(hash) === 3);
        // The store answers: the held presentations go on one at a time, in this test's order; the
        // kept one's answer is what the client has. With usedFirst, the client refreshes with it
        // before the abandoned ones that come after it in the order run.
        let pair: Answer | undefined;
        let current: Answer | undefined;
        for (const k of order) {
          const finished = reads.finished;
          gates.get(k)!.open();
          if (k === 3) {
            pair = await kept;
            expect(pair.status, JSON.stringify(pair.body)).toBe(200);
            if (usedFirst) {
              current = await refresh(g.f, pair.body.refresh_token!);
              expect(current.status, JSON.stringify(current.body)).toBe(200);
            }
          } else {
            // The abandoned request runs to its end (its answer goes nowhere).
            await until(() => reads.finished === finished + 1);
          }
        }
        reads.hold = null;
        await Promise.all(late);
        const chainsLost = (await chainRevoked(g)) ? 1 : 0;
        // The pair the client holds now: the one it received, or the one it refreshed to.
        const held = current ?? pair!;
        const deadPairs = (await pairIsLive(g.f, held)) ? 0 : 1;
        expect({ deadPairs, chainsLost }).toEqual({ deadPairs: 0, chainsLost: 0 });
        expect(await liveRefreshTokens(g.authorizationId)).toBe(1);
      } finally {
        reads.hold = null;
        for (const gate of gates.values()) gate.open();
      }
    },
    60_000,
  );
});
