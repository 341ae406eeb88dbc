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

interface Queue<I, R> {
  busy: boolean;
  waiting: Waiting<I, R>[];
}

/**
 * A function of one item, whose concurrent calls are coalesced into calls of `runBatch` with every
 * item waiting by then. Per database (or transaction) one batch is under way at a time. `runBatch`
 * answers one result per item, in the items' order; when it fails, every call of its batch fails
 * with its error.
 */
export function batched<I, R>(runBatch: (db: Knex, items: I[]) => Promise<R[]>): (db: Knex, item: I) => Promise<R> {
  const queues = new WeakMap<Knex, Queue<I, R>>();

  async function drain(db: Knex, queue: Queue<I, R>): Promise<void> {
    queue.busy = true;
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0);
      try {
        const results = await runBatch(db, batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    queue.busy = false;
  }

  return (db, item) =>
    new Promise<R>((resolve, reject) => {
      let queue = queues.get(db);
      if (!queue) {
        queue = { busy: false, waiting: [] };
        queues.set(db, queue);
      }
      queue.waiting.push({ item, resolve, reject });
      if (!queue.busy) void drain(db, queue);
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
