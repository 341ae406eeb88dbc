// The queue's database (pg-boss's `db`, over our own pool) prepares pg-boss's statements with
// parameters, once per connection, runs the others (scripts of several commands) as pg-boss does,
// and keeps a LISTEN going through a lost connection.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDb, type TestDb } from '../../test/support/db.ts';
import { QueueDb } from './queueDb.ts';

describe('QueueDb', () => {
  let testDb: TestDb;
  let db: QueueDb;

  beforeAll(async () => {
    testDb = await createTestDb('pg', { migrate: false });
    db = new QueueDb({ connectionString: testDb.url, max: 1 }); // one connection: the session's prepared statements are this pool's
  });
  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  const prepared = async () => {
    const { rows } = await db.executeSql('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time');
    return rows.map((r: { statement: string }) => r.statement);
  };

  it('prepares a statement with parameters on its first call and reuses it, with the same answers', async () => {
    const sql = 'SELECT $1::int + $2::int AS sum';
    expect((await db.executeSql(sql, [1, 2])).rows).toEqual([{ sum: 3 }]);
    expect((await db.executeSql(sql, [40, 2])).rows).toEqual([{ sum: 42 }]);
    expect(await prepared()).toEqual([sql]);
  });

  it('runs a script of several commands, and a statement without parameters, unprepared', async () => {
    await db.executeSql('CREATE TABLE script_probe (n int); INSERT INTO script_probe VALUES (7);');
    expect((await db.executeSql('SELECT n FROM script_probe')).rows).toEqual([{ n: 7 }]);
    expect(await prepared()).toEqual(['SELECT $1::int + $2::int AS sum']);
  });

  it('reports a failing prepared statement as pg-boss would, and the pool goes on', async () => {
    await expect(db.executeSql('SELECT 1 / $1::int AS q', [0])).rejects.toMatchObject({ code: '22012' });
    expect((await db.executeSql('SELECT 1 / $1::int AS q', [1])).rows).toEqual([{ q: 1 }]);
    // Prepared, as the statements that do not fail are (the pool's one connection is the one asked).
    expect(await prepared()).toContain('SELECT 1 / $1::int AS q');
  });

  it("names its connections as pg-boss names its own pools' (pgboss:<8 hex>), or as told", async () => {
    const { rows } = await db.executeSql("SELECT current_setting('application_name') AS name");
    expect(rows[0].name).toMatch(/^pgboss:[0-9a-f]{8}$/);
    const named = new QueueDb({ connectionString: testDb.url, max: 1, application_name: 'worker-7' });
    try {
      expect((await named.executeSql("SELECT current_setting('application_name') AS name")).rows).toEqual([
        { name: 'worker-7' },
      ]);
    } finally {
      await named.close();
    }
  });

  it('runs a prepared statement again under a new name when a migration changed the rows it returns, on every connection', async () => {
    // Two connections, each with the statement prepared: after the first fails and is dropped, the
    // call goes again on the other, whose plan under the old name is stale too.
    const two = new QueueDb({ connectionString: testDb.url, max: 2 });
    try {
      await two.executeSql('CREATE TABLE returning_probe (a int)');
      const insert = 'INSERT INTO returning_probe (a) VALUES ($1) RETURNING *';
      // Two calls at once: each opens a connection, which prepares the insert.
      await Promise.all([1, 2].map((a) => two.executeSql(insert, [a])));
      // As another process's pg-boss migration does to its job table.
      await two.executeSql('ALTER TABLE returning_probe ADD COLUMN b int DEFAULT 5');
      expect((await two.executeSql(insert, [3])).rows).toEqual([{ a: 3, b: 5 }]);
      expect((await two.executeSql(insert, [4])).rows).toEqual([{ a: 4, b: 5 }]);
    } finally {
      await two.close();
    }
  });

  it('hears NOTIFY on its own connection, and listens again after that connection is killed, telling the caller (notices may have been missed)', async () => {
    const heard: Array<string | null> = [];
    const listening = await db.listen(
      'queue_db_probe',
      (payload) => heard.push(payload),
      () => heard.push(null),
    );
    try {
      expect(heard).toEqual([null]); // after every subscribe, the first too, as pg-boss's own pool does
      await db.executeSql("SELECT pg_notify('queue_db_probe', 'one')");
      await vi.waitFor(() => expect(heard).toEqual([null, 'one']));
      await db.executeSql(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = \'LISTEN "queue_db_probe"\'',
      );
      await vi.waitFor(() => expect(heard).toEqual([null, 'one', null]), { timeout: 10_000 });
      await db.executeSql("SELECT pg_notify('queue_db_probe', 'two')");
      await vi.waitFor(() => expect(heard).toEqual([null, 'one', null, 'two']));
    } finally {
      await listening.close();
    }
  });
});
