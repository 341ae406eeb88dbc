// Concurrent starts of one user share the quota's transaction, against a real store (PostgreSQL;
// MySQL too when TEST_MYSQL_URL is set): the limit stays exact, a repeated Idempotency-Key fails
// only the start that repeated it, and a shared transaction that fails goes again start by start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { isUniqueViolation } from '../db/insert.ts';
import { insertRunWithinLimit, quotaInserter } from './quotaBatches.ts';
import { runsStore } from './runsStore.ts';
import type { NewRunRow } from './store.ts';

describe.each(testDialects())('quota transactions shared by concurrent starts (%s)', (dialect) => {
  let t: TestDb;
  let userId: number;
  beforeAll(async () => {
    t = await createTestDb(dialect, { migrate: true });
    await t.db('users').insert({ login: 'batch', name: 'batch', password_hash: 'x', created_at: 0 });
    userId = Number((await t.db('users').first('id'))!.id);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  let made = 0;
  async function workflow(): Promise<string> {
    const id = `wf_batch_${++made}`;
    await t.db('workflows').insert({
      id,
      user_id: userId,
      name: id,
      name_lower: id,
      description: '',
      nodes: '[]',
      edges: '[]',
      created_at: 0,
      updated_at: 0,
    });
    return id;
  }
  const run = (workflowId: string, idempotencyKey: string | null = null): NewRunRow => ({
    id: `run_batch_${++made}`,
    workflow_id: workflowId,
    user_id: userId,
    status: 'queued',
    inputs: '{}',
    graph: '{}',
    output: null,
    error: null,
    usage: null,
    idempotency_key: idempotencyKey,
    attempts: 0,
    created_at: 0,
    started_at: null,
    finished_at: null,
    duration_ms: null,
  });
  /** insertRunWithinLimit over the store's quota transaction, counting the transactions. */
  function counting(): { insert: ReturnType<typeof quotaInserter>; transactions: () => number } {
    let begun = 0;
    const insert = quotaInserter((db, rows, limit) => (begun++, runsStore(db).startWithinQuota(rows, limit)));
    return { insert, transactions: () => begun };
  }
  /** insertRunWithinLimit over the store's quota transaction, whose transactions numbered in `failing` fail with `error` (nothing written). */
  function failingTransactions(failing: number[], error: Error): ReturnType<typeof quotaInserter> {
    let begun = 0;
    return quotaInserter((db, rows, limit) =>
      failing.includes(++begun) ? Promise.reject(error) : runsStore(db).startWithinQuota(rows, limit),
    );
  }
  const unfinished = async (workflowId: string) =>
    Number(
      (
        (await t
          .db('runs')
          .where({ workflow_id: workflowId })
          .whereIn('status', ['queued', 'running'])
          .count({ n: '*' })) as [{ n: number | string }]
      )[0].n,
    );

  it('starts that come while a transaction is under way go together in the next, and only as many as fit the limit are inserted, in order', async () => {
    const wf = await workflow();
    await t.db('runs').insert([run(wf), run(wf)]); // 2 of 5 taken
    const { insert, transactions } = counting();
    const results = await Promise.all(Array.from({ length: 8 }, () => insert(t.db, run(wf), 5)));
    // The first went alone; the seven that came while it was under way shared the next one.
    expect(transactions()).toBe(2);
    expect(results).toEqual([
      'inserted',
      'inserted',
      'inserted',
      'over_limit',
      'over_limit',
      'over_limit',
      'over_limit',
      'over_limit',
    ]);
    expect(await unfinished(wf)).toBe(5);
  });

  it('a shared insert that repeats an Idempotency-Key is tried one start at a time: only the repeat fails', async () => {
    const wf = await workflow();
    const [alone, first, repeat, other] = [run(wf), run(wf, 'k'), run(wf, 'k'), run(wf)];
    const settled = await Promise.allSettled(
      [alone, first, repeat, other].map((r) => insertRunWithinLimit(t.db, r, 100)),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(isUniqueViolation((settled[2] as PromiseRejectedResult).reason)).toBe(true);
    expect((await t.db('runs').where({ workflow_id: wf }).pluck('id')).sort()).toEqual(
      [alone.id, first.id, other.id].sort(),
    );
  });

  it('a shared transaction that fails with any other error (a deadlock, say) is tried one start at a time: each start gets its own answer', async () => {
    const wf = await workflow();
    const deadlock = new Error('Deadlock found when trying to get lock; try restarting transaction');
    // The first start goes alone; the three that came meanwhile share the second transaction, which fails.
    const insert = failingTransactions([2], deadlock);
    const rows = [run(wf), run(wf), run(wf), run(wf)];
    const results = await Promise.all(rows.map((r) => insert(t.db, r, 100)));
    expect(results).toEqual(['inserted', 'inserted', 'inserted', 'inserted']);
    expect((await t.db('runs').where({ workflow_id: wf }).pluck('id')).sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('a start whose own transaction fails gets that error', async () => {
    const wf = await workflow();
    const deadlock = new Error('Deadlock found when trying to get lock; try restarting transaction');
    // The lone start's transaction (1) fails; the two that came meanwhile share 2, which fails, then
    // each goes alone: 3 fails, 4 does not.
    const insert = failingTransactions([1, 2, 3], deadlock);
    const rows = [run(wf), run(wf), run(wf)];
    const settled = await Promise.allSettled(rows.map((r) => insert(t.db, r, 100)));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(settled.slice(0, 2).map((s) => (s as PromiseRejectedResult).reason)).toEqual([deadlock, deadlock]);
    expect(await t.db('runs').where({ workflow_id: wf }).pluck('id')).toEqual([rows[2]!.id]);
  });

  it('the store refuses, before any statement, runs of more than one user or workflow in one quota transaction', async () => {
    const [a, b] = [await workflow(), await workflow()];
    for (const rows of [
      [run(a), run(b)],
      [run(a), { ...run(a), user_id: userId + 1 }],
    ]) {
      await expect(runsStore(t.db).startWithinQuota(rows, 100)).rejects.toThrow(
        'the runs are not all of one user and one workflow',
      );
    }
    expect(await unfinished(a)).toBe(0);
  });

  it("refuses every start of the batch when the workflow was deleted, and keeps other users' and workflows' starts apart", async () => {
    const [gone, kept] = [await workflow(), await workflow()];
    await t.db('workflows').where({ id: gone }).update({ deleted_at: 1 });
    const { insert, transactions } = counting();
    const results = await Promise.all(
      [run(gone), run(kept), run(gone), run(kept), run(gone)].map((r) => insert(t.db, r, 100)),
    );
    expect(results).toEqual(['workflow_deleted', 'inserted', 'workflow_deleted', 'inserted', 'workflow_deleted']);
    expect(transactions()).toBe(4); // per workflow: the first alone, then the rest together
    expect(await unfinished(gone)).toBe(0);
    expect(await unfinished(kept)).toBe(2);
  });
});
