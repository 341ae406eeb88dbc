// Run starts of one user and one workflow in this process share the quota's transaction. Each
// start counts the user's unfinished runs under a lock on the user's row (runsStore.ts
// startWithinQuota), so one user's starts queue on that row: under load, each waited for
// every start before it to take the lock, count, insert and commit, and held a pooled connection
// while it waited. Now, while one transaction is under way, the starts that come meanwhile wait
// (src/db/batched.ts batched) and go together in the next one: one lock, one count, one
// insert for all of them. A start that comes alone goes at once, as before; the quota stays exact
// (the first that fit are inserted, the rest are over the limit, in the order they came).
import type { Knex } from 'knex';
import { answerOf, batched, togetherElseAlone } from '../db/batched.ts';
import { runsStore } from './runsStore.ts';
import type { NewRunRow, QuotaInsert } from './store.ts';

/** The most runs one transaction inserts; the rest wait for the next. */
const MAX_BATCH = 32;

interface Start {
  row: NewRunRow;
  limit: number;
}

/** The store's quota transaction: inserts the runs that fit (runsStore.ts startWithinQuota). */
export type QuotaTransaction = (db: Knex, rows: readonly NewRunRow[], limit: number) => Promise<QuotaInsert[]>;

/**
 * `insertRunWithinLimit` over `transaction` (the store's; a test's own wraps it to count or fail
 * the transactions): its own queue of concurrent starts.
 */
export function quotaInserter(
  transaction: QuotaTransaction = (db, rows, limit) => runsStore(db).startWithinQuota(rows, limit),
): (db: Knex, row: NewRunRow, limit: number) => Promise<QuotaInsert> {
  /** The starts (of one user, workflow and limit) in one transaction, else each in its own. */
  const transactions = batched(
    (db: Knex, starts: Start[]) =>
      togetherElseAlone(starts, (some) =>
        transaction(
          db,
          some.map((s) => s.row),
          some[0]!.limit,
        ),
      ),
    { keyOf: ({ row, limit }) => `${row.user_id} ${row.workflow_id} ${limit}`, max: MAX_BATCH },
  );
  return async (db, row, limit) => answerOf(await transactions(db, { row, limit }));
}

/**
 * Inserts the run unless its user already has `limit` runs queued or running (or its workflow was
 * deleted since the caller read it), in a transaction shared with the concurrent starts of the same
 * user and workflow. `limit` is the process's USER_MAX_CONCURRENT_RUNS, one for every start. A
 * shared transaction that fails for any reason (an Idempotency-Key sent twice at once, a deadlock,
 * a lock wait timeout) is tried again one start at a time, so a start fails only with the error of
 * its own transaction.
 */
export const insertRunWithinLimit = quotaInserter();
