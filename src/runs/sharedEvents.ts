// A run's new events read once per process for all its event streams (eventStream.ts). Each stream
// used to read the store on every notice of its run: a run with N streams cost N reads per batch of
// events, and 4,884 streams on one run took every connection of the pool. Here the
// process listens to the queue's notices once, and each run followed by a stream keeps its latest
// events in memory: on a notice, the first stream to ask reads what is new (one query, shared by
// the streams that ask meanwhile), and every stream serves itself from that. A stream further
// behind than what is kept (a replay from `Last-Event-ID` of a long run) reads the store itself,
// page by page, as before.
import type { Knex } from 'knex';
import { listRunEventsAfter, type StoredRunEvent } from './events.ts';
import type { RunQueue } from './queue.ts';

/** Events kept per followed run: a stream behind them reads the store itself. */
const KEPT_EVENTS = 2000;
/** Events one shared read takes; more wait for the next. */
const READ_PAGE = 500;

/** A stream's view of its run: wakes on each notice (its `wake`), reads what is after its last event. */
export interface RunFollower {
  /** Up to `limit` events after `after`, oldest first, as stored. */
  read(after: number, limit: number): Promise<StoredRunEvent[]>;
  stop(): void;
}

interface Followed {
  wakes: Set<() => void>;
  /** Notices concerning the run so far; `kept` is current when read at this count. */
  notices: number;
  /** The run's events with seq in (from, last], contiguous, read at `readAt` notices. */
  kept: { from: number; events: StoredRunEvent[]; readAt: number } | undefined;
  reading: Promise<void> | undefined;
}

type Feeds = Pick<RunQueue, 'watchRunEvents' | 'watchRunEnded'>;

export class SharedRunEvents {
  private readonly runs = new Map<string, Followed>();
  private listening: Promise<unknown> | undefined;
  private readonly db: Knex;
  private readonly feeds: Feeds;

  constructor(db: Knex, feeds: Feeds) {
    this.db = db;
    this.feeds = feeds;
  }

  /**
   * Follows `runId`: `wake` is called on each notice of its new events or of its end (and after a
   * reconnect of the queue's listener, when notices may have been missed). Listening has begun
   * when this resolves, so an event stored after it is not missed.
   */
  async follow(runId: string, wake: () => void): Promise<RunFollower> {
    this.listening ??= Promise.all([
      this.feeds.watchRunEvents((id) => this.noticed(id)),
      this.feeds.watchRunEnded((id) => this.noticed(id)),
    ]);
    await this.listening;
    let run = this.runs.get(runId);
    if (!run) this.runs.set(runId, (run = { wakes: new Set(), notices: 0, kept: undefined, reading: undefined }));
    const followed = run;
    followed.wakes.add(wake);
    return {
      read: (after, limit) => this.read(runId, followed, after, limit),
      stop: () => {
        followed.wakes.delete(wake);
        if (!followed.wakes.size && this.runs.get(runId) === followed) this.runs.delete(runId);
      },
    };
  }

  /** A notice of `runId` (null: of any run): what is kept of it is stale, its streams wake. */
  private noticed(runId: string | null): void {
    const concerned = runId === null ? [...this.runs.values()] : [this.runs.get(runId)].filter((r) => r !== undefined);
    for (const run of concerned) {
      run.notices++;
      for (const wake of [...run.wakes]) wake();
    }
  }

  private async read(runId: string, run: Followed, after: number, limit: number): Promise<StoredRunEvent[]> {
    for (;;) {
      const kept = run.kept;
      // Streams that open together wait for the first one's read, which may seed what is kept.
      if (!kept && run.reading) {
        await run.reading.catch(() => undefined);
        continue;
      }
      if (!kept || after < kept.from) return this.readOwn(runId, run, after, limit);
      if (kept.readAt === run.notices) return eventsAfter(kept.events, after, limit);
      await this.refresh(runId, run, kept);
    }
  }

  /** The stream's own read (nothing kept yet, or it is behind what is): it seeds what is kept when there is none. */
  private async readOwn(runId: string, run: Followed, after: number, limit: number): Promise<StoredRunEvent[]> {
    const notices = run.notices;
    const reading = listRunEventsAfter(this.db, runId, after, limit);
    const seeding = !run.kept;
    if (seeding) run.reading = reading.then(() => undefined);
    try {
      const events = await reading;
      // Seeded only from a read that reached the end and found the run's stream where it was asked
      // to start (a Last-Event-ID past the end finds nothing, and must not hide what comes before it).
      if (!run.kept && events.length < limit && (events.length > 0 || after === 0))
        run.kept = { from: after, events: [...events], readAt: notices };
      return events;
    } finally {
      if (seeding) run.reading = undefined;
    }
  }

  /** Reads what is new after what is kept, once for every stream asking meanwhile. */
  private refresh(runId: string, run: Followed, kept: NonNullable<Followed['kept']>): Promise<void> {
    run.reading ??= (async () => {
      const notices = run.notices;
      const last = kept.events.at(-1)?.seq ?? kept.from;
      try {
        const events = await listRunEventsAfter(this.db, runId, last, READ_PAGE);
        kept.events.push(...events);
        const over = kept.events.length - KEPT_EVENTS;
        if (over > 0) kept.from = kept.events.splice(0, over).at(-1)!.seq;
        // A full page: more may be stored; what is kept stays stale, and the next read takes them.
        if (events.length < READ_PAGE) kept.readAt = notices;
      } finally {
        run.reading = undefined;
      }
    })();
    return run.reading;
  }
}

/** Up to `limit` of contiguous `events` after seq `after`. */
function eventsAfter(events: readonly StoredRunEvent[], after: number, limit: number): StoredRunEvent[] {
  const first = events.findIndex((e) => e.seq > after);
  return first === -1 ? [] : events.slice(first, first + limit);
}
