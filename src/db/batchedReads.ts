import type { Knex } from 'knex';

// Reads by key, coalesced: while one statement is under way, the keys asked for meanwhile wait and
// go out together in the next one. Under load, concurrent requests then share a round trip and a
// statement (on MariaDB a statement reading 4 keys costs about a third of 4 statements:
// docs/benchmarks.md, issue 19); a read asked for alone goes out at once. A read never joins a
// statement already under way, so it sees what a read of its own, started when it was asked for,
// would see (a revocation committed before the ask is seen).

interface Waiting<K, V> {
  key: K;
  resolve(value: V | undefined): void;
  reject(err: unknown): void;
}

interface Queue<K, V> {
  busy: boolean;
  waiting: Waiting<K, V>[];
}

/**
 * A reader of one value by key, which coalesces concurrent reads into calls of `readMany` with at
 * most `max` distinct keys each. Per database (or transaction) one batch is under way at a time;
 * the next takes every read waiting by then, in calls side by side when it names more than `max`
 * keys (so no read waits behind more than one batch, even when the database is slow). `readMany`
 * answers what it found by key; a key it did not find reads as undefined. When a call fails, every
 * read of its batch fails with its error.
 */
export function batchedReads<K, V>(readMany: (db: Knex, keys: K[]) => Promise<Map<K, V>>, max: number): (db: Knex, key: K) => Promise<V | undefined> {
  const queues = new WeakMap<Knex, Queue<K, V>>();

  async function drain(db: Knex, queue: Queue<K, V>): Promise<void> {
    queue.busy = true;
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0);
      const keys = [...new Set(batch.map((w) => w.key))];
      try {
        const calls = [];
        for (let i = 0; i < keys.length; i += max) calls.push(readMany(db, keys.slice(i, i + max)));
        const found = new Map((await Promise.all(calls)).flatMap((answer) => [...answer]));
        for (const w of batch) w.resolve(found.get(w.key));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    queue.busy = false;
  }

  return (db, key) =>
    new Promise<V | undefined>((resolve, reject) => {
      let queue = queues.get(db);
      if (!queue) {
        queue = { busy: false, waiting: [] };
        queues.set(db, queue);
      }
      queue.waiting.push({ key, resolve, reject });
      if (!queue.busy) void drain(db, queue);
    });
}
