// A run's per-node log, written behind execution (one insert for the steps of a fast run, at its end).
import type { RunsStore } from './runsStore.ts';
import type { Retried } from './storeRetry.ts';
import { LOG_TEXT_MAX, type NewStepRow, type StepEnd } from './store.ts';

export { LOG_TEXT_MAX };

/**
 * A node still running after this long has its start written at once (a client polling the run
 * sees it `running`); steps that end sooner are written once, start and end together, in one
 * insert with the others (at the latest just before the run is finished). A run is claimed after
 * as long (attempt.ts), and its events wait as long for company (eventLog.ts).
 */
export const STEP_LOG_DELAY_MS = 50;

/** The text as logged: whole, or cut at LOG_TEXT_MAX characters (never inside a surrogate pair). */
export function logText(text: string | null): { text: string | null; cut: boolean } {
  if (text === null || text.length <= LOG_TEXT_MAX) return { text, cut: false };
  const end = /[\uD800-\uDBFF]/.test(text[LOG_TEXT_MAX - 1]!) ? LOG_TEXT_MAX - 1 : LOG_TEXT_MAX;
  return { text: text.slice(0, end), cut: true };
}

type NewStep = NewStepRow;

/**
 * The most steps whose rows an attempt keeps after they are written (for a `Prefer: wait` of this
 * process, runner.ts endedHere, which keeps only small runs anyway): a run of more is read back.
 */
const KEPT_MAX_STEPS = 256;

/**
 * One run's per-node log, written behind execution: a step that starts and ends within
 * STEP_LOG_DELAY_MS is inserted once, already ended, together with the others; a slower one is
 * inserted as `running` when the delay passes and updated when it ends. Inserts keep start order,
 * so the log reads in execution order. `close()` waits for the writes under way and reports a
 * failed one; what is left, `rest()`, goes in the transaction that ends the run. Nothing is
 * written unless `mine()` says the attempt holds the run (it claims the run if need be).
 */
export class StepLog {
  private readonly pending: NewStep[] = [];
  /**
   * Every step of the attempt, as written (or about to be): the log as the store has it after
   * close(); undefined past KEPT_MAX_STEPS (a wide map's log is read from the store, not held).
   */
  private all: NewStep[] | undefined = [];
  /** The steps started and not ended, by id, and those not written yet: a run of many steps (a wide map's) finds each at once, not by a scan. */
  private readonly running = new Map<string, NewStep>();
  private readonly unwritten = new Set<NewStep>();
  private writes: Promise<void> = Promise.resolve();
  private failure: unknown;
  private timer: NodeJS.Timeout | undefined;

  private readonly store: RunsStore;
  private readonly runId: string;
  private readonly retry: Retried;
  private readonly mine: () => Promise<boolean>;

  constructor(store: RunsStore, runId: string, retry: Retried, mine: () => Promise<boolean>) {
    this.store = store;
    this.runId = runId;
    this.retry = retry;
    this.mine = mine;
  }

  start(row: NewStep): void {
    this.pending.push(row);
    this.all?.push(row);
    if (this.all && this.all.length > KEPT_MAX_STEPS) this.all = undefined;
    this.unwritten.add(row);
    if (row.status === 'running') this.running.set(row.node_id, row);
    if (!this.timer) this.timer = setTimeout(() => this.flush(), STEP_LOG_DELAY_MS);
  }

  end(nodeId: string, end: StepEnd): void {
    const row = this.running.get(nodeId);
    this.running.delete(nodeId);
    const unwritten = row !== undefined && this.unwritten.has(row);
    if (row) Object.assign(row, end);
    if (!unwritten) this.enqueue(() => this.store.endStep(this.runId, nodeId, end));
  }

  /** The log in execution order, as the store has it once the run's end (with `rest()`) is written; undefined for a long one. */
  written(): readonly NewStep[] | undefined {
    return this.all;
  }

  /** Resolves when the writes under way are done, rejects if one failed. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writes;
    if (this.failure !== undefined) throw this.failure;
  }

  /** After close(): the steps not yet written, to be written with the run's end. */
  rest(): NewStep[] {
    this.unwritten.clear();
    return this.pending.splice(0).map((r) => ({ ...r }));
  }

  /** The attempt was taken away: nothing more is written. */
  discard(): void {
    clearTimeout(this.timer);
    this.pending.length = 0;
    this.unwritten.clear();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending.length) return;
    const rows = this.pending.splice(0).map((r) => ({ ...r }));
    this.unwritten.clear();
    this.enqueue(() => this.store.appendSteps(rows));
  }

  private enqueue(write: () => Promise<void>): void {
    this.writes = this.writes.then(async () => {
      if (this.failure !== undefined) return;
      try {
        if (await this.mine()) await this.retry(write);
      } catch (err) {
        this.failure = err;
      }
    });
  }
}
