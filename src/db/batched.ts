import type { Knex } from 'knex';

// Calls coalesced: while one statement is under way, the calls asked for meanwhile wait and go out
// together in the next one. Under load, concurrent requests then share a round trip and a statement
// (on MariaDB a statement reading 4 keys costs about a third of 4 statements, and a statement
// inserting many rows commits once: docs/benchmarks-history.md); a call asked for alone goes out
// at once. A call never joins a statement already under way, so it sees what a statement of its
// own, started when it was asked for, would see (a revocation committed before the ask is seen).

interface Waiting<I, R> {
  item: I;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * A function of one item, whose concurrent calls are coalesced into calls of `runBatch` with every
 * item waiting by then, at most `max` (the rest wait for the next call). Per database (a knex
 * instance or transaction by default; `D` for another client, such as the run queue's pool) and
 * per `keyOf(item)` (one for all items without it), one batch is under way at a time, or up to
 * `parallel`: another starts, with every item waiting, at the end of the event loop's turn in which
 * items came while all were under way (so the items of one turn go together). `runBatch` answers
 * one result per item, in the items' order; when it fails, every call of its batch fails with its
 * error.
 */
export function batched<I, R, D extends object = Knex>(
  runBatch: (db: D, items: I[]) => Promise<R[]>,
  {
    keyOf = () => '',
    max = Infinity,
    parallel = 1,
  }: { keyOf?: (item: I) => string; max?: number; parallel?: number } = {},
): (db: D, item: I) => Promise<R> {
  /** Per database, by key: the items waiting, and how many batches of theirs are under way. */
  const lanes = new WeakMap<D, Map<string, Lane<I, R>>>();

  /** Runs the lane's batches one after another until none is waiting; the lane is forgotten once none of its batches is under way. */
  async function drain(db: D, lane: Lane<I, R>, forget: () => void): Promise<void> {
    lane.running += 1;
    while (lane.queue.length > 0) {
      const batch = lane.queue.splice(0, max);
      try {
        const results = await runBatch(
          db,
          batch.map((w) => w.item),
        );
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    lane.running -= 1;
    if (lane.running === 0) forget();
  }

  return (db, item) =>
    new Promise<R>((resolve, reject) => {
      let byKey = lanes.get(db);
      if (!byKey) {
        byKey = new Map();
        lanes.set(db, byKey);
      }
      const key = keyOf(item);
      let lane = byKey.get(key);
      if (!lane) {
        lane = { queue: [], running: 0, starting: false };
        byKey.set(key, lane);
      }
      lane.queue.push({ item, resolve, reject });
      const forget = () => byKey.delete(key);
      if (lane.running === 0) void drain(db, lane, forget);
      else if (lane.running < parallel && !lane.starting) {
        const started = lane;
        started.starting = true;
        setImmediate(() => {
          started.starting = false;
          if (started.queue.length > 0 && started.running < parallel) void drain(db, started, forget);
        });
      }
    });
}

interface Lane<I, R> {
  queue: Waiting<I, R>[];
  running: number;
  /** Another batch will start at the end of this turn. */
  starting: boolean;
}

/**
 * A reader of one value by key, which coalesces concurrent reads into calls of `readMany` with at
 * most `max` distinct keys each: a batch naming more goes out in calls side by side (so no read
 * waits behind more than one batch, even when the database is slow). `readMany` answers what it
 * found by key; a key it did not find reads as undefined. `parallel`: as batched's.
 */
export function batchedReads<K, V>(
  readMany: (db: Knex, keys: K[]) => Promise<Map<K, V>>,
  max: number,
  parallel = 1,
): (db: Knex, key: K) => Promise<V | undefined> {
  return batched(
    async (db, keys: K[]) => {
      const distinct = [...new Set(keys)];
      const calls = [];
      for (let i = 0; i < distinct.length; i += max) calls.push(readMany(db, distinct.slice(i, i + max)));
      const found = new Map((await Promise.all(calls)).flatMap((answer) => [...answer]));
      return keys.map((key) => found.get(key));
    },
    { parallel },
  );
}

/** What became of one item of a batch: its answer, or the error of a statement that was its own. */
export type Outcome<R> = R | { failed: unknown };

/**
 * `run` for the items together; if that throws, `run` for each item alone, one after another in
 * their order (so of two items that conflict, the first wins), and an error then fails its own
 * item only. `run` answers one outcome per item, in order.
 */
export async function togetherElseAlone<I, R>(
  items: I[],
  run: (items: I[]) => Promise<Outcome<R>[]>,
): Promise<Outcome<R>[]> {
  try {
    return await run(items);
  } catch (err) {
    if (items.length === 1) return [{ failed: err }];
    const outcomes: Outcome<R>[] = [];
    for (const item of items) outcomes.push(...(await togetherElseAlone([item], run)));
    return outcomes;
  }
}

/** The outcome's answer, or its error thrown. */
export function answerOf<R extends string | boolean>(outcome: Outcome<R>): R {
  if (typeof outcome === 'object') throw outcome.failed;
  return outcome;
}
