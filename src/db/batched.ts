import type { Knex } from 'knex';

// Calls coalesced: while one statement is under way, the calls asked for meanwhile wait and go out
// together in the next one. Under load, concurrent requests then share a round trip and a statement
// (on MariaDB a statement reading 4 keys costs about a third of 4 statements, and a statement
// inserting many rows commits once: docs/benchmarks.md, issue 19); a call asked for alone goes out
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
 * per `keyOf(item)` (one for all items without it), one batch is under way at a time. `runBatch`
 * answers one result per item, in the items' order; when it fails, every call of its batch fails
 * with its error.
 */
export function batched<I, R, D extends object = Knex>(
  runBatch: (db: D, items: I[]) => Promise<R[]>,
  { keyOf = () => '', max = Infinity }: { keyOf?: (item: I) => string; max?: number } = {},
): (db: D, item: I) => Promise<R> {
  /** Per database, the items waiting by key, while a batch of theirs is under way. */
  const queues = new WeakMap<D, Map<string, Waiting<I, R>[]>>();

  /** Runs the queue's batches one after another until none is waiting, then forgets it (in the same turn as its last check). */
  async function drain(db: D, queue: Waiting<I, R>[], forget: () => void): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, max);
      try {
        const results = await runBatch(db, batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    forget();
  }

  return (db, item) =>
    new Promise<R>((resolve, reject) => {
      let byKey = queues.get(db);
      if (!byKey) {
        byKey = new Map();
        queues.set(db, byKey);
      }
      const key = keyOf(item);
      const waiting = byKey.get(key);
      if (waiting) {
        waiting.push({ item, resolve, reject });
        return;
      }
      const queue = [{ item, resolve, reject }];
      byKey.set(key, queue);
      void drain(db, queue, () => byKey.delete(key));
    });
}

/**
 * A reader of one value by key, which coalesces concurrent reads into calls of `readMany` with at
 * most `max` distinct keys each: a batch naming more goes out in calls side by side (so no read
 * waits behind more than one batch, even when the database is slow). `readMany` answers what it
 * found by key; a key it did not find reads as undefined.
 */
export function batchedReads<K, V>(readMany: (db: Knex, keys: K[]) => Promise<Map<K, V>>, max: number): (db: Knex, key: K) => Promise<V | undefined> {
  return batched(async (db, keys: K[]) => {
    const distinct = [...new Set(keys)];
    const calls = [];
    for (let i = 0; i < distinct.length; i += max) calls.push(readMany(db, distinct.slice(i, i + max)));
    const found = new Map((await Promise.all(calls)).flatMap((answer) => [...answer]));
    return keys.map((key) => found.get(key));
  });
}

/** What became of one item of a batch: its answer, or the error of a statement that was its own. */
export type Outcome<R> = R | { failed: unknown };

/**
 * `run` for the items together; if that throws, `run` for each item alone, one after another in
 * their order (so of two items that conflict, the first wins), and an error then fails its own
 * item only. `run` answers one outcome per item, in order.
 */
export async function togetherElseAlone<I, R>(items: I[], run: (items: I[]) => Promise<Outcome<R>[]>): Promise<Outcome<R>[]> {
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
