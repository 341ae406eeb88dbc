// A run's state changes, one method each. Every one is a conditional update from the state it
// expects, so concurrent actors (an API cancel, a worker, a second worker after a crash, the
// sweep) cannot overwrite each other: whoever matches the row wins, the others see false. How a
// change reaches the database is the adapter's business: a knex transaction on PostgreSQL
// (runsStorePostgres.ts), one multi-statement round trip on MySQL where it pays
// (runsStoreMysql.ts). runsStore.test.ts holds both to this interface. (The adapters take their
// types from store.ts, not from here, so that nothing imports this module back.)
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';
import type { NewRunEvent } from './events.ts';
import { MysqlRunsStore } from './runsStoreMysql.ts';
import { PostgresRunsStore } from './runsStorePostgres.ts';
import type {
  EndEvents,
  EndingAttempt,
  FinalEvents,
  KeptStep,
  NewRunRow,
  NewStepRow,
  QuotaInsert,
  RunEnd,
  RunSpent,
  StepEnd,
} from './store.ts';

export interface RunsStore {
  /** Stores a queued run (callers without a quota). */
  start(row: NewRunRow): Promise<void>;
  /**
   * Stores queued runs (all of one user and one workflow, in order, or it throws) while the user
   * has fewer than `limit` runs queued or running, and answers for each: the first that fit are
   * inserted, the rest are over the limit; all are refused when the workflow was deleted since the
   * caller read it. The user's row is locked for the count and the insert, so concurrent starts by
   * one user are counted one after another and never overshoot the limit (the count is taken after
   * the lock: on MySQL's REPEATABLE READ and PostgreSQL's READ COMMITTED alike it sees every earlier
   * holder's runs). The workflow's row is locked with it: a delete committed before is seen here,
   * and a later one waits for this insert, so its cancel sweep sees the runs.
   */
  startWithinQuota(rows: readonly NewRunRow[], limit: number): Promise<QuotaInsert[]>;
  /**
   * queued -> running for the first execution, fenced on the attempt count read with the run (a
   * run requeued meanwhile is not claimed twice): true when the caller now holds attempt
   * `expectedAttempt + 1`; false if the run was no longer queued (cancelled, or claimed meanwhile).
   */
  claim(id: string, expectedAttempt: number, now: number): Promise<boolean>;
  /**
   * running -> running for a retry after the previous holder died: bumps the attempt (so the old
   * holder, if only slow, can no longer end the run) and restarts the clock. The steps the earlier
   * attempts finished stay, and are returned: the new attempt resumes after them (a finished
   * node's provider call is never made twice). Those `completed` or `skipped`, and those `failed`
   * of the nodes in `continued` (`on_error: continue`); any other step (running when its attempt
   * died, failed, cancelled) is cleared and its node runs again, as is a step whose output the log
   * cut (it cannot be restored whole). Undefined when the run was not taken over.
   */
  takeOver(
    id: string,
    expectedAttempt: number,
    now: number,
    continued: readonly string[],
  ): Promise<KeptStep[] | undefined>;
  /** Appends steps in the order given, their execution order (the log is read in insertion order). */
  appendSteps(rows: readonly NewStepRow[]): Promise<void>;
  /** Ends the step of `nodeId` that is still running. */
  endStep(runId: string, nodeId: string, end: StepEnd): Promise<void>;
  /**
   * A run cancelled while `attempt` held it: what that attempt's steps spent (the run's usage and
   * cost, as its end would have written them), written once (the cancel writes none), fenced on
   * the attempt, so a cancelled run's tokens are counted as any other's.
   */
  keepSpent(id: string, attempt: number, spent: RunSpent): Promise<void>;
  /**
   * Appends events to the run's stream numbered after `after` (read when undefined), for the one
   * writer that numbers them itself (the worker); a number taken meanwhile is read again. Returns
   * the last number written.
   */
  appendEvents(runId: string, after: number | undefined, events: NewRunEvent[], now: number): Promise<number>;
  /**
   * Ends a run held (or run unclaimed) by its attempt, with the worker's last steps and events, all
   * or nothing; false when someone else ended it first (a cancel) or took it over.
   */
  finish(
    id: string,
    ending: EndingAttempt,
    end: RunEnd,
    final?: FinalEvents,
    steps?: readonly NewStepRow[],
  ): Promise<boolean>;
  /** queued|running -> cancelled, with the stream's end events; false when the run was already terminal. */
  cancel(id: string, now: number, error: string, endEvents?: EndEvents): Promise<boolean>;
  /**
   * Fails a run that is not yet terminal (queue write failed, worker lost, store unavailable), and
   * closes the steps its lost attempt left `running` with the same error: no step stays open.
   */
  failUnfinished(id: string, error: string, now: number, endEvents?: EndEvents): Promise<boolean>;
  /** A run that failed only because it could not be enqueued goes back to queued (idempotent retry). */
  requeue(id: string, error: string): Promise<boolean>;
}

const stores = new WeakMap<Knex, RunsStore>();

/** The runs store over `db`, in its dialect's adapter. */
export function runsStore(db: Knex): RunsStore {
  let store = stores.get(db);
  if (!store) {
    store = dialectOf(db) === 'mysql' ? new MysqlRunsStore(db) : new PostgresRunsStore(db);
    stores.set(db, store);
  }
  return store;
}
