// Refresh rotation when the interleaving is forced, not left to chance (RFC 9700 4.14.2): the
// rotation is the insert of the token's successor, and the store's insert waits at a gate the test
// opens, so that two refreshes both read the token unrotated, or a revocation lands between a
// refresh's read and its rotation.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashToken } from '../shared/crypto.ts';
import { testDialects } from '../../test/support/db.ts';
import type { Fixture } from '../../test/support/oauthFlow.ts';
import { freshGrant, refreshAt, userinfoStatus } from '../../test/support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import type * as StoreModule from './store.ts';
import { revokeAuthorization } from './authorizations.store.ts';
import { findTokenByRefreshHash, insertSuccessorToken } from './store.ts';

/** A gate in front of the rotation's insert (null lets calls through at once), and what each insert answered. */
const rotation = vi.hoisted(() => ({ gate: null as null | (() => Promise<void>), results: [] as boolean[] }));

vi.mock('./store.ts', async (importOriginal) => {
  const real = await importOriginal<typeof StoreModule>();
  return {
    ...real,
    insertSuccessorToken: async (...args: Parameters<typeof real.insertSuccessorToken>) => {
      await rotation.gate?.();
      const stored = await real.insertSuccessorToken(...args);
      rotation.results.push(stored);
      return stored;
    },
  };
});

/** A promise with its resolve, to open a gate from outside. */
function latch(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/**
 * Holds the rotation's inserts until `count` refreshes have read the token and reached it, then a
 * few milliseconds more: a successor's time is taken before the gate, so the loser then finds the
 * rotation in the past even with REFRESH_REUSE_GRACE_SECONDS=0 (in the same millisecond it is within).
 */
function untilArrived(count: number): () => Promise<void> {
  const all = latch();
  let arrived = 0;
  return async () => {
    if (++arrived === count) setTimeout(all.open, 5);
    await all.promise;
  };
}

interface Answer {
  status: number;
  body: { access_token?: string; refresh_token?: string; error?: string };
}

/** What each suite's tests get: the server, a refresh of a token, a user info status, a fresh grant. */
interface SuiteTools {
  server: () => TestServer;
  refresh: (f: Fixture, token: string) => Promise<Answer>;
  userinfo: (accessToken: string) => Promise<number>;
  aGrant: () => Promise<{ f: Fixture; refreshToken: string; accessToken: string }>;
}

/** Two refreshes of one new token, held at the rotation until both read it unrotated; exactly one stores the successor. */
async function twoRefreshesOfOneToken({
  refresh,
  aGrant,
}: Pick<SuiteTools, 'refresh' | 'aGrant'>): Promise<{ f: Fixture; answers: Answer[] }> {
  const { f, refreshToken } = await aGrant();
  rotation.results = [];
  rotation.gate = untilArrived(2);
  const answers = await Promise.all([refresh(f, refreshToken), refresh(f, refreshToken)]);
  rotation.gate = null;
  // Both reached the rotation; exactly one stored the successor.
  expect(rotation.results.sort()).toEqual([false, true]);
  return { f, answers };
}

function suite(name: string, env: Record<string, string>, tests: (s: SuiteTools) => void) {
  describe.each(testDialects())(`${name} (%s)`, (dialect) => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ dialect, env });
    });
    afterAll(async () => {
      rotation.gate = null;
      await server?.close();
    });
    const refresh = (f: Fixture, token: string) => refreshAt(server.baseUrl, f, token);
    const userinfo = (accessToken: string) => userinfoStatus(server.baseUrl, accessToken);
    const aGrant = () => freshGrant(server);
    tests({ server: () => server, refresh, userinfo, aGrant });
  });
}

suite('refresh rotation, forced interleavings', {}, ({ server, refresh, userinfo, aGrant }) => {
  it('two refreshes that both read the token unrotated: one rotates it, the other loses the unique key and, within the grace window, answers the winner’s pair (one live chain)', async () => {
    const { f, answers } = await twoRefreshesOfOneToken({ refresh, aGrant });
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answers[0]!.body).toEqual(answers[1]!.body);
    expect(await userinfo(answers[0]!.body.access_token!)).toBe(200);
    expect((await refresh(f, answers[0]!.body.refresh_token!)).status).toBe(200);
  });

  it('a grant revoked between the read and the rotation: invalid_grant, and no pair is stored', async () => {
    const { f, refreshToken, accessToken } = await aGrant();
    const db = server().ctx.db;
    const { authorization_id: authorizationId } = await db('oauth_tokens')
      .where({ refresh_token_hash: hashToken(refreshToken) })
      .first('authorization_id');
    const tokensOfGrant = async () =>
      Number((await db('oauth_tokens').where({ authorization_id: authorizationId }).count({ n: '*' }))[0]!.n);
    const before = await tokensOfGrant();
    const reached = latch();
    const revoked = latch();
    rotation.gate = async () => {
      reached.open();
      await revoked.promise;
    };
    const answer = refresh(f, refreshToken);
    await reached.promise;
    // The user revokes the app in the meantime (RFC 7009 revocation of the access token).
    const revocation = await fetch(`${server().baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: accessToken, client_id: f.clientId, client_secret: f.clientSecret }),
    });
    expect(revocation.status).toBe(200);
    revoked.open();
    expect(await answer).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    rotation.gate = null;
    expect(await tokensOfGrant()).toBe(before);
    expect((await refresh(f, refreshToken)).status).toBe(400);
  });
});

suite('refresh token reads', {}, ({ server, refresh, aGrant }) => {
  it('answers concurrent reads of different refresh tokens each with its own token, and an unknown one with null', async () => {
    const grants = [];
    for (let i = 0; i < 6; i += 1) grants.push(await aGrant());
    const db = server().ctx.db;
    const hashes = [...grants.map((g) => hashToken(g.refreshToken)), hashToken('ghr_unknown')];
    const alone: Array<number | null> = [];
    for (const h of hashes) alone.push((await findTokenByRefreshHash(db, h))?.authorizationId ?? null);
    // The same reads asked for all at once, twice over (each hash twice), and in reverse order.
    const together = await Promise.all([...hashes, ...hashes].reverse().map((h) => findTokenByRefreshHash(db, h)));
    expect(together.map((t) => t?.authorizationId ?? null)).toEqual([...alone, ...alone].reverse());
    expect(alone.slice(0, -1).every((id) => typeof id === 'number')).toBe(true);
    expect(new Set(alone).size).toBe(hashes.length);
    // And the grant: concurrent refreshes of all of them each get their own grant's new pair.
    const answers = await Promise.all(grants.map((g) => refresh(g.f, g.refreshToken)));
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expect((await findTokenByRefreshHash(db, hashToken(answer.body.refresh_token!)))?.authorizationId).toBe(alone[i]);
    }
  });
});

suite('concurrent rotations (one statement for the successors)', {}, ({ server, aGrant }) => {
  /** The successor of each token, inserted all at once (the first goes out alone, the rest together): what each insert answered, and whether its row is there. */
  async function rotateTogether(
    tokens: Array<{ refreshToken: string; revoked?: boolean; faulty?: boolean }>,
  ): Promise<Array<{ answered: boolean | 'error'; stored: boolean }>> {
    const db = server().ctx.db;
    const rows = await Promise.all(
      tokens.map(async (t) => (await findTokenByRefreshHash(db, hashToken(t.refreshToken)))!),
    );
    for (const [i, t] of tokens.entries())
      if (t.revoked) await revokeAuthorization(db, rows[i]!.authorizationId!, Date.now());
    const successors = rows.map((row, i) => ({
      authorizationId: row.authorizationId,
      codeId: row.codeId,
      // A faulty row: longer than the column, which both databases refuse (strict mode on MySQL's defaults).
      accessTokenHash: tokens[i]!.faulty ? 'x'.repeat(1000) : hashToken(`gho_successor_${i}_${Math.random()}`),
      refreshTokenHash: hashToken(`ghr_successor_${i}_${Math.random()}`),
      scope: row.scope,
      accessExpiresAt: Date.now() + 60_000,
      refreshExpiresAt: Date.now() + 60_000,
      createdAt: Date.now(),
    }));
    // Prepared statements (src/db/prepared.ts) take a pooled connection as knex's queries do, but
    // emit no 'query' event: the connections taken less knex's queries are the prepared inserts.
    const acquire = vi.spyOn(db.client as { acquireConnection(): Promise<unknown> }, 'acquireConnection');
    let knexQueries = 0;
    const countKnexQuery = () => void (knexQueries += 1);
    db.on('query', countKnexQuery);
    const answers = await Promise.all(
      successors.map((s, i) => insertSuccessorToken(db, s, rows[i]!.id).catch(() => 'error' as const)),
    ).finally(() => {
      db.off('query', countKnexQuery);
      statements.push(acquire.mock.calls.length - knexQueries);
      acquire.mockRestore();
    });
    const stored = await Promise.all(
      successors.map(
        async (s, i) =>
          (await db('oauth_tokens')
            .where({ refresh_token_hash: s.refreshTokenHash, rotated_from_id: rows[i]!.id })
            .first('id')) !== undefined,
      ),
    );
    return answers.map((answered, i) => ({ answered, stored: stored[i]! }));
  }
  /** The insert statements each rotateTogether sent. */
  const statements: number[] = [];
  const grants = async (count: number) => {
    const list = [];
    for (let i = 0; i < count; i += 1) list.push(await aGrant());
    return list;
  };

  it('stores every successor whose grant stands; one whose grant was revoked is refused and not stored', async () => {
    const [a, b, c, d] = await grants(4);
    const outcome = await rotateTogether([a!, b!, { ...c!, revoked: true }, d!]);
    expect(outcome).toEqual([true, true, false, true].map((ok) => ({ answered: ok, stored: ok })));
    expect(statements.at(-1)).toBe(2); // a alone, then b, c and d in one statement
  });

  it('a token presented twice in one statement, and one rotated by the statement before: each rotated once, the others stored', async () => {
    const [a, b, c] = await grants(3);
    // a goes out alone; the rest share a statement that violates the unique key twice over.
    const outcome = await rotateTogether([a!, b!, b!, a!, { ...c!, revoked: true }]);
    expect(outcome).toEqual([true, true, false, false, false].map((ok) => ({ answered: ok, stored: ok })));
  });

  it('a row at fault fails its own rotation only: the others of its statement are stored and say so', async () => {
    const [a, b, c, d] = await grants(4);
    // a goes out alone; b, c and d share a statement that c's row makes fail.
    const outcome = await rotateTogether([a!, b!, { ...c!, faulty: true }, d!]);
    expect(outcome).toEqual([
      { answered: true, stored: true },
      { answered: true, stored: true },
      { answered: 'error', stored: false },
      { answered: true, stored: true },
    ]);
  });
});

suite(
  'refresh rotation, forced interleavings, REFRESH_REUSE_GRACE_SECONDS=0',
  { REFRESH_REUSE_GRACE_SECONDS: '0' },
  ({ refresh, userinfo, aGrant }) => {
    it('two refreshes that both read the token unrotated: the one that loses the rotation revokes the chain, and the winner’s pair dies with it', async () => {
      const { f, answers } = await twoRefreshesOfOneToken({ refresh, aGrant });
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
      const winner = answers.find((a) => a.status === 200)!;
      expect(await userinfo(winner.body.access_token!)).toBe(401);
      expect((await refresh(f, winner.body.refresh_token!)).status).toBe(400);
    });
  },
);
