// Run starts of one user and one workflow in this process share the quota's transaction. Each
// start counts the user's unfinished runs under a lock on the user's row (store.ts
// insertRunsWithinLimit), so one user's starts queue on that row: under load, each waited for
// every start before it to take the lock, count, insert and commit, and held a pooled connection
// while it waited. Now, while one transaction is under way, the starts that come meanwhile wait
// here and go together in the next one: one lock, one count, one insert for all of them. A start
// that comes alone goes at once, as before; the quota stays exact (the first that fit are
// inserted, the rest are over the limit, in the order they came).
import type { Knex } from 'knex';
import * as store from './store.ts';
import type { NewRunRow, QuotaInsert } from './store.ts';

/** The most runs one transaction inserts; the rest wait for the next. */
const MAX_BATCH = 32;

interface Waiting {
  row: NewRunRow;
  resolve(result: QuotaInsert): void;
  reject(err: unknown): void;
}

/** Per database: the starts waiting, by user and workflow, while a transaction of theirs is under way. */
const queues = new WeakMap<Knex, Map<string, Waiting[]>>();

/**
 * Inserts the run unless its user already has `limit` runs queued or running (or its workflow was
 * deleted since the caller read it), in a transaction shared with the concurrent starts of the same
 * user and workflow. `limit` is the process's USER_MAX_CONCURRENT_RUNS, one for every start. A
 * shared transaction that fails for any reason (an Idempotency-Key sent twice at once, a deadlock,
 * a lock wait timeout) is tried again one start at a time, so a start fails only with the error of
 * its own transaction.
 */
export function insertRunWithinLimit(db: Knex, row: NewRunRow, limit: number): Promise<QuotaInsert> {
  let byKey = queues.get(db);
  if (!byKey) {
    byKey = new Map();
    queues.set(db, byKey);
  }
  const key = `${row.user_id} ${row.workflow_id}`;
  return new Promise<QuotaInsert>((resolve, reject) => {
    const waiting = byKey.get(key);
    if (waiting) {
      waiting.push({ row, resolve, reject });
      return;
    }
    const queue = [{ row, resolve, reject }];
    byKey.set(key, queue);
    void drain(db, limit, queue, () => byKey.delete(key));
  });
}

/** Runs the queue's transactions one after another until none is waiting, then forgets it (in the same turn as its last check). */
async function drain(db: Knex, limit: number, queue: Waiting[], forget: () => void): Promise<void> {
  try {
    while (queue.length > 0) await insertTogether(db, limit, queue.splice(0, MAX_BATCH));
  } finally {
    forget();
  }
}

async function insertTogether(db: Knex, limit: number, batch: Waiting[]): Promise<void> {
  try {
    const results = await store.insertRunsWithinLimit(db, batch.map((w) => w.row), limit);
    batch.forEach((w, i) => w.resolve(results[i]!));
  } catch (err) {
    if (batch.length === 1) {
      batch[0]!.reject(err);
      return;
    }
    for (const w of batch) await insertTogether(db, limit, [w]);
  }
}
