// A statement that loses a lock conflict is no server error. The refresh grant's rotation is an
// INSERT ... SELECT, which holds InnoDB's table-level AUTO-INC lock to the end of its statement:
// when it waits for that lock behind an insert that then waits for a row the rotation has read,
// InnoDB rolls one back, and MariaDB reports the rotation's rollback as error 1467 ("Failed to
// read auto-increment value from storage engine"). The rotation is retried (the store rolled it
// back whole), so the client gets its 200; a conflict that outlasts the retries, or a connection
// lost under a statement, is a 503 with Retry-After (`temporarily_unavailable` at the token
// endpoint), never a 500.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKnex, destroyKnex } from '../../src/db/knex.ts';
import type * as TransientModule from '../../src/db/transient.ts';
import type * as StoreModule from '../../src/oauth/store.ts';
import { hashToken } from '../../src/shared/crypto.ts';
import { testDialects, testKnexLogger } from '../support/db.ts';
import type { Fixture } from '../support/oauthFlow.ts';
import { freshGrant, refreshAt } from '../support/refreshGrants.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** The store errors the service's conflict retries saw, and an error the next rotation throws (injected). */
const seen = vi.hoisted(() => ({ errnos: [] as unknown[], injected: null as null | Error }));

vi.mock('../../src/db/transient.ts', async (importOriginal) => {
  const real = await importOriginal<typeof TransientModule>();
  return {
    ...real,
    retryConflicts: <T>(fn: () => Promise<T>, tries?: number) =>
      real.retryConflicts(async () => {
        try {
          return await fn();
        } catch (err) {
          seen.errnos.push((err as { errno?: unknown; code?: unknown }).errno ?? (err as { code?: unknown }).code);
          throw err;
        }
      }, tries),
  };
});

vi.mock('../../src/oauth/store.ts', async (importOriginal) => {
  const real = await importOriginal<typeof StoreModule>();
  return {
    ...real,
    insertSuccessorToken: async (...args: Parameters<typeof real.insertSuccessorToken>) => {
      const injected = seen.injected;
      seen.injected = null;
      if (injected) throw injected;
      return real.insertSuccessorToken(...args);
    },
  };
});

/**
 * Until `ok()` holds, asked every 200 ms: reading information_schema.innodb_trx takes InnoDB's lock
 * latch, and asked every few milliseconds it held the service's statement off for seconds.
 */
async function until(ok: () => Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 200));
}

describe.each(testDialects())('store conflicts at the token endpoint (%s)', (dialect) => {
  let server: TestServer;
  /** The test's own connections (the server's pool stays the server's). */
  let own: Knex;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
    own = createKnex(server.databaseUrl, { poolMax: 4, logger: testKnexLogger });
  });
  afterAll(async () => {
    seen.injected = null;
    if (own) await destroyKnex(own);
    await server?.close();
  });

  const refresh = (f: Fixture, token: string) => refreshAt(server.baseUrl, f, token);
  const aGrant = () => freshGrant(server);

  it.runIf(dialect === 'mysql')(
    'the rotation, a victim of the AUTO-INC deadlock (MariaDB 1467), is retried: the client gets its 200',
    async () => {
      // Three grants; the refreshed one has the lowest authorization id.
      const refreshed = await aGrant();
      const middle = await aGrant();
      const other = await aGrant();
      const deadlocksBefore = Number((await own.raw("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'"))[0][0].Value);

      // U holds the middle grant's row.
      const u = await own.transaction();
      await u.raw('SELECT id FROM authorizations WHERE id = ? FOR UPDATE', [middle.authorizationId]);
      // T, a heavier transaction (100 rows written: InnoDB rolls back the lighter one), inserts a
      // token for each grant in one INSERT ... SELECT, highest id first: the first row inserted, it
      // holds the AUTO-INC lock and waits for U's row.
      const t = await own.transaction();
      const tThread = Number((await t.raw('SELECT CONNECTION_ID() AS id'))[0][0].id);
      const tokenRow = (authorization: string, n: string) =>
        `${authorization}, NULL, CONCAT('conflict-a-', ${n}, '-', ${Date.now()}), CONCAT('conflict-r-', ${n}, '-', ${Date.now()}), 'user_info', 0, 0, 0`;
      const columns =
        '(authorization_id, code_id, access_token_hash, refresh_token_hash, scope, access_expires_at, refresh_expires_at, created_at)';
      await t.raw(`INSERT INTO oauth_tokens ${columns} SELECT ${tokenRow('?', 'seq')} FROM seq_1_to_100`, [
        other.authorizationId,
      ]);
      const tInsert = t
        .raw(
          `INSERT INTO oauth_tokens ${columns} SELECT ${tokenRow('id', "CONCAT('t', id)")} FROM authorizations WHERE id IN (?, ?, ?) ORDER BY id DESC FOR UPDATE`,
          [other.authorizationId, middle.authorizationId, refreshed.authorizationId],
        )
        .then(
          () => 'inserted' as const,
          (err: unknown) => err,
        );
      // A transaction of this test's database (not another test's) that waits for a lock.
      const waiting = async (where: string, binding: number) =>
        Number(
          (
            await own.raw(
              `SELECT COUNT(*) AS n FROM information_schema.innodb_trx x JOIN information_schema.processlist p ON p.id = x.trx_mysql_thread_id
        WHERE p.db = DATABASE() AND x.trx_state = 'LOCK WAIT' AND ${where}`,
              [binding],
            )
          )[0][0].n,
        ) > 0;
      await until(() => waiting('x.trx_mysql_thread_id = ?', tThread));

      // The rotation: its select reads the refreshed grant's row (a shared lock), then it waits for
      // the AUTO-INC lock that T holds.
      seen.errnos = [];
      const answer = refresh(refreshed.f, refreshed.refreshToken);
      await until(() =>
        waiting("x.trx_query LIKE 'insert into oauth_tokens%' AND x.trx_mysql_thread_id <> ?", tThread),
      );
      // U lets T go on: T wants the refreshed grant's row, which the rotation has read: a deadlock.
      await u.rollback();
      const tOutcome = await tInsert;
      expect(tOutcome).toBe('inserted');
      await t.commit();

      const { status, body } = await answer;
      expect(status, JSON.stringify(body)).toBe(200);
      expect(seen.errnos).toContain(1467);
      expect(Number((await own.raw("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'"))[0][0].Value)).toBeGreaterThan(
        deadlocksBefore,
      );
      // The pair works: the rotation was stored once.
      expect((await refresh(refreshed.f, body.refresh_token!)).status).toBe(200);
    },
    60_000,
  );

  it('a connection lost under the rotation (killed while it waits for a lock) is 503 temporarily_unavailable with Retry-After; the token still works', async () => {
    const g = await aGrant();
    // The token's row held: the rotation's statement waits for it.
    const holder = await own.transaction();
    await holder('oauth_tokens')
      .where({ refresh_token_hash: hashToken(g.refreshToken) })
      .forUpdate()
      .first('id');
    const answer = refresh(g.f, g.refreshToken);
    const holderSession = Number(
      dialect === 'pg'
        ? (await holder.raw('SELECT pg_backend_pid() AS id')).rows[0].id
        : (await holder.raw('SELECT CONNECTION_ID() AS id'))[0][0].id,
    );
    // The session executing the rotation's insert, from the live process list (innodb_trx is a
    // cache InnoDB refreshes at most every 100 ms: it can still show a session's earlier wait).
    const rotationSession = async (): Promise<number | undefined> => {
      if (dialect === 'pg') {
        const { rows } = await own.raw(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'insert into oauth_tokens%' AND pid <> ?",
          [holderSession],
        );
        return rows[0]?.pid;
      }
      const [rows] = await own.raw(
        "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE 'insert into oauth_tokens%' AND id <> ? AND id <> CONNECTION_ID()",
        [holderSession],
      );
      return rows[0]?.id;
    };
    let session: number | undefined;
    await until(async () => (session = await rotationSession()) !== undefined);
    if (dialect === 'pg') await own.raw('SELECT pg_terminate_backend(?)', [session!]);
    else await own.raw(`KILL CONNECTION ${Number(session)}`);
    const lost = await answer;
    await holder.rollback();
    expect(lost).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    expect(Number(lost.retryAfter)).toBeGreaterThan(0);
    // The client retries as told (a pooled connection of the killed session's may answer 503 once more).
    let retried = await refresh(g.f, g.refreshToken);
    for (let i = 0; i < 3 && retried.status === 503; i += 1) retried = await refresh(g.f, g.refreshToken);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
  }, 60_000);

  it('a lock conflict that outlasts the retries is 503 temporarily_unavailable with Retry-After, never 500; the token still works', async () => {
    const g = await aGrant();
    const conflict =
      dialect === 'mysql'
        ? Object.assign(new Error('Failed to read auto-increment value from storage engine'), {
            errno: 1467,
            code: 'ER_AUTOINC_READ_FAILED',
            sqlState: 'HY000',
          })
        : Object.assign(new Error('deadlock detected'), { code: '40P01' });
    seen.injected = conflict;
    const refused = await refresh(g.f, g.refreshToken);
    expect(refused).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    // Nothing was rotated: the client's retry with the same token gets its pair.
    expect((await refresh(g.f, g.refreshToken)).status).toBe(200);
  });
});
