// A run's event stream (events.ts), written behind execution.
import type { NewRunEvent } from './events.ts';
import type { RunsStore } from './runsStore.ts';
import { STEP_LOG_DELAY_MS } from './stepLog.ts';
import type { Retried } from './storeRetry.ts';
import type { FinalEvents } from './store.ts';

/** A step inside a map's item (`<map>[<i>].<node>`: node ids hold no brackets). */
const IN_MAP_ITEM = /\[\d+\]\./;

/** The stream's bound (RUN_MAX_EVENTS) and what passing it does (the attempt fails the run with `too_many_events`). */
export interface EventCap {
  max: number;
  exceeded(): void;
  /** A step of that shape that still sends its events: a call of a run's own node (callSteps.ts). */
  shown?(stepId: string): boolean;
}

/**
 * One run's event stream (events.ts), written behind execution in order, as the step log is: the
 * first event waits STEP_LOG_DELAY_MS for others, so a run that ends sooner writes its whole
 * stream once, in the transaction that ends it (`rest()`); a slower one writes what came, then
 * whatever came during each write in the next (an llm_call's deltas pile up into one insert), and
 * each write is announced so the run's streams read it at once. The worker numbers the events
 * itself (no locking read; a number taken by another writer makes it read the last one again).
 * `close()` waits for the write in flight and reports a failed one.
 *
 * Bounded: the steps inside a map's items send no events (the map's `node.progress` counts them,
 * their log is the run's steps), so a wide map stores a few rows, not some per item; and past
 * `cap.max` events (the run's end events aside) nothing more is stored and the cap is told.
 */
export class EventLog {
  private readonly pending: NewRunEvent[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failure: unknown;
  private discarded = false;
  /** The number of the last event written, or undefined when not known (a retry, or a failed write). */
  private last: number | undefined;
  /** The run's events so far, this attempt's and (once a write says) its earlier attempts', against `cap`. */
  private count = 0;
  private overflowed = false;

  private readonly store: RunsStore;
  private readonly now: () => number;
  private readonly runId: string;
  private readonly retry: Retried;
  private readonly mine: () => Promise<boolean>;
  private readonly announceEvents: (runId: string) => void;
  private readonly cap: EventCap;

  constructor(
    store: RunsStore,
    now: () => number,
    runId: string,
    retry: Retried,
    mine: () => Promise<boolean>,
    announceEvents: (runId: string) => void,
    last: number | undefined,
    cap: EventCap = { max: Infinity, exceeded: () => {} },
  ) {
    this.store = store;
    this.now = now;
    this.runId = runId;
    this.retry = retry;
    this.mine = mine;
    this.announceEvents = announceEvents;
    this.last = last;
    this.cap = cap;
  }

  add(type: NewRunEvent['type'], data: unknown): void {
    if (this.discarded || this.failure !== undefined) return;
    const stepId = (data as { node_id?: string }).node_id ?? '';
    if (type !== 'run.status' && IN_MAP_ITEM.test(stepId) && !this.cap.shown?.(stepId)) return;
    if (this.count >= this.cap.max) return this.overflow();
    this.count += 1;
    this.pending.push({ type, data });
    if (!this.writing && !this.timer) this.timer = setTimeout(() => this.flush(), STEP_LOG_DELAY_MS);
  }

  /** Waits for the write in flight; afterwards, the events not yet written are `rest()`. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** After close(): the events not yet written, to be written with the run's end, and the last number written. */
  rest(): FinalEvents {
    return { events: this.pending.splice(0), after: this.last };
  }

  /** The attempt was taken away: nothing more is written. */
  discard(): void {
    this.discarded = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.length = 0;
  }

  /** Past the cap: nothing more is stored, and the cap is told once. */
  private overflow(): void {
    if (this.overflowed) return;
    this.overflowed = true;
    this.cap.exceeded();
  }

  private flush(): void {
    this.timer = undefined;
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    try {
      if (!(await this.mine())) return; // the attempt does not hold the run: its events are not the run's
      while (this.pending.length && !this.discarded) {
        const batch = this.pending.splice(0);
        const after = this.last;
        this.last = undefined; // unknown until this write is done
        this.last = await this.retry(() => this.store.appendEvents(this.runId, after, batch, this.now()));
        this.count = Math.max(this.count, this.last + this.pending.length); // a run taken over counts its earlier attempts' events too
        this.announceEvents(this.runId);
      }
    } catch (err) {
      this.failure = err;
      this.pending.length = 0;
    } finally {
      this.writing = undefined;
    }
  }
}
