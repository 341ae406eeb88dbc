// One-round-trip transactions on a real MySQL store (when TEST_MYSQL_URL is set): in one
// transaction, on connections of their own, and a caller that finds them all busy gets the
// "database unavailable" error within the wait knex's pool allows, not an endless wait; and they
// close with the store, so a process that closes its store exits.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { isDatabaseUnavailable } from './unavailable.ts';
import { inOneRoundTrip } from './oneRoundTrip.ts';

// MySQL only: the PostgreSQL store never sends these (skipped when TEST_MYSQL_URL is unset).
describe.runIf(testDialects().includes('mysql'))('one-round-trip transactions (mysql)', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb('mysql', { migrate: false });
    await t.db.raw('CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(8) NOT NULL)');
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('runs the statements in one transaction and answers for each; a failing one leaves nothing of the others', async () => {
    const [inserted, read] = await inOneRoundTrip(t.db, [
      { sql: 'INSERT INTO notes (id, body) VALUES (?, ?), (?, ?)', values: [1, 'one', 2, 'two'] },
      { sql: 'SELECT body FROM notes WHERE id = ?', values: [2] },
    ]);
    expect(inserted).toMatchObject({ affectedRows: 2 });
    expect(read).toEqual([{ body: 'two' }]);
    await expect(
      inOneRoundTrip(t.db, [
        { sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', values: [3, 'three'] },
        { sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', values: [1, 'again'] }, // a duplicate key
      ]),
    ).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(await t.db('notes').orderBy('id').pluck('id')).toEqual([1, 2]);
  });

  it('a caller that finds every connection busy gets the database-unavailable error after the wait, and the busy ones finish', async () => {
    const busy = Array.from({ length: 4 }, () => inOneRoundTrip(t.db, [{ sql: 'DO SLEEP(?)', values: [7] }]));
    const waiting = inOneRoundTrip(t.db, [{ sql: 'SELECT 1', values: [] }]).then(
      () => 'answered',
      (err: unknown) => err,
    );
    const outcome = await waiting;
    expect(isDatabaseUnavailable(outcome)).toBe(true);
    expect(await Promise.all(busy)).toHaveLength(4);
    expect(await inOneRoundTrip(t.db, [{ sql: 'SELECT 1 AS one', values: [] }])).toEqual([[{ one: 1 }]]);
  }, 20_000);

  it('destroyKnex closes the one-round-trip connections with the store: a process that used them and closes its store exits', async () => {
    const script = `
      import { createKnex, destroyKnex } from './src/db/knex.ts';
      import { inOneRoundTrip } from './src/db/oneRoundTrip.ts';
      const db = createKnex(process.env.STORE_URL);
      await inOneRoundTrip(db, [{ sql: 'SELECT 1', values: [] }]);
      await destroyKnex(db);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, STORE_URL: t.url },
      stdio: 'ignore',
    });
    // An open mysql2 pool keeps a process alive for its 60 s idle timeout: well past this bound.
    const bound = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(bound);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  }, 20_000);
});
