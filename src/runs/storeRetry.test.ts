// A worker's store call that loses a deadlock is made again, not lost (the bench's wide maps had
// run_steps updates deadlock and the run's log write fail): the store rolled the victim back
// whole, so withStore repeats it. A real deadlock on each database, between the call and another
// transaction that takes the same two rows in the other order.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { CONFLICT_TRIES } from '../db/transient.ts';
import { StoreUnavailable, withStore } from './storeRetry.ts';

async function until(ok: () => Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 200));
}

describe.each(testDialects())('withStore and lock conflicts (%s)', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect, { migrate: false });
    await t.db.schema.createTable('conflict_rows', (table) => {
      table.integer('id').primary();
      table.integer('v').notNullable();
    });
    await t
      .db('conflict_rows')
      .insert([{ id: 1, v: 0 }, { id: 2, v: 0 }, ...Array.from({ length: 50 }, (_, i) => ({ id: 100 + i, v: 0 }))]);
  });
  afterAll(() => t?.destroy());

  /** Whether a statement on this test's database (not another test's) waits for a lock. */
  const someoneWaits = async (db: Knex) =>
    dialect === 'pg'
      ? Number(
          (
            await db.raw(
              "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rows[0].n,
        ) > 0
      : Number(
          (
            await db.raw(`SELECT COUNT(*) AS n FROM information_schema.innodb_trx x JOIN information_schema.processlist p ON p.id = x.trx_mysql_thread_id
          WHERE p.db = DATABASE() AND x.trx_state = 'LOCK WAIT'`)
          )[0][0].n,
        ) > 0;

  it('a transaction that is a deadlock victim is made again, and its writes land', async () => {
    // The other transaction: heavier (InnoDB rolls back the lighter one), holding row 1.
    const other = await t.db.transaction();
    await other('conflict_rows').where('id', '>=', 100).update({ v: 1 });
    await other('conflict_rows').where({ id: 1 }).update({ v: 1 });
    let attempts = 0;
    const written = withStore(
      () =>
        t.db.transaction(async (trx) => {
          attempts += 1;
          await trx('conflict_rows').where({ id: 2 }).update({ v: 2 });
          await trx('conflict_rows').where({ id: 1 }).update({ v: 2 }); // waits for the other
        }),
      60_000,
    );
    // The call waits for row 1; the other now wants row 2, which the call holds: a deadlock. On
    // PostgreSQL the call, waiting longest, finds it (deadlock_timeout) and is rolled back; on
    // MariaDB the lighter transaction, the call's, is.
    await until(() => someoneWaits(t.db));
    await other('conflict_rows').where({ id: 2 }).update({ v: 1 });
    await other.commit();
    await written;
    expect(attempts).toBe(2);
    expect(await t.db('conflict_rows').whereIn('id', [1, 2]).orderBy('id').pluck('v')).toEqual([2, 2]);
  }, 60_000);

  it('a call that keeps losing is given up after a few tries with its own error (not a store outage)', async () => {
    let attempts = 0;
    const deadlock = dialect === 'pg' ? { code: '40P01' } : { errno: 1213, code: 'ER_LOCK_DEADLOCK' };
    const call = withStore(async () => {
      attempts += 1;
      throw Object.assign(new Error('deadlock'), deadlock);
    }, 60_000);
    const err = await call.catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(StoreUnavailable);
    expect(err).toMatchObject(deadlock);
    expect(attempts).toBe(CONFLICT_TRIES);
  });
});
