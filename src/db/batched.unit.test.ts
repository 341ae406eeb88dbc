import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { batched, batchedReads } from './batched.ts';

/** A readMany whose calls the test answers by hand: each call's keys, and its answer to give. */
function manualReads() {
  const calls: Array<{ keys: string[]; answer(found: Record<string, number>): void; fail(err: Error): void }> = [];
  const readMany = (_db: Knex, keys: string[]) =>
    new Promise<Map<string, number>>((resolve, reject) => {
      calls.push({ keys, answer: (found) => resolve(new Map(Object.entries(found))), fail: reject });
    });
  return { calls, readMany };
}

const db = {} as Knex;
const tick = () => new Promise((r) => setImmediate(r));

describe('batchedReads', () => {
  it('sends a read asked for alone at once', async () => {
    const { calls, readMany } = manualReads();
    const read = batchedReads(readMany, 4);
    const a = read(db, 'a');
    expect(calls.map((c) => c.keys)).toEqual([['a']]);
    calls[0]!.answer({ a: 1 });
    expect(await a).toBe(1);
  });

  it('sends the reads asked for while one is under way together, in the next call, each answered with its own value', async () => {
    const { calls, readMany } = manualReads();
    const read = batchedReads(readMany, 4);
    const first = read(db, 'a');
    const waiting = [read(db, 'b'), read(db, 'c'), read(db, 'missing')];
    // Under way: the first call only; the others do not join it.
    expect(calls.map((c) => c.keys)).toEqual([['a']]);
    calls[0]!.answer({ a: 1, b: 99 });
    expect(await first).toBe(1);
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([['a'], ['b', 'c', 'missing']]);
    calls[1]!.answer({ b: 2, c: 3 });
    expect(await Promise.all(waiting)).toEqual([2, 3, undefined]);
  });

  it('puts at most max distinct keys in a call, the calls of one batch side by side; a key asked for twice counts once and both get its value', async () => {
    const { calls, readMany } = manualReads();
    const read = batchedReads(readMany, 2);
    const first = read(db, 'x');
    const reads = [read(db, 'a'), read(db, 'a'), read(db, 'b'), read(db, 'c')];
    calls[0]!.answer({ x: 0 });
    await first;
    await tick();
    expect(calls.slice(1).map((c) => c.keys)).toEqual([['a', 'b'], ['c']]);
    calls[2]!.answer({ c: 3 });
    calls[1]!.answer({ a: 1, b: 2 });
    expect(await Promise.all(reads)).toEqual([1, 1, 2, 3]);
  });

  it('fails every read of a failed call with its error, and goes on with the next', async () => {
    const { calls, readMany } = manualReads();
    const read = batchedReads(readMany, 4);
    const first = read(db, 'a');
    const failing = [read(db, 'b'), read(db, 'c')];
    calls[0]!.answer({ a: 1 });
    await first;
    await tick();
    calls[1]!.fail(new Error('connection lost'));
    for (const r of failing) await expect(r).rejects.toThrow('connection lost');
    const later = read(db, 'd');
    expect(calls[2]!.keys).toEqual(['d']);
    calls[2]!.answer({ d: 4 });
    expect(await later).toBe(4);
  });

  it('never puts reads of two databases (or transactions) in one call', async () => {
    const { calls, readMany } = manualReads();
    const read = batchedReads(readMany, 4);
    const other = {} as Knex;
    const reads = [read(db, 'a'), read(other, 'b')];
    expect(calls.map((c) => c.keys)).toEqual([['a'], ['b']]);
    calls[0]!.answer({ a: 1 });
    calls[1]!.answer({ b: 2 });
    expect(await Promise.all(reads)).toEqual([1, 2]);
  });
});

describe('batched, with a key per item and a max', () => {
  it('keeps a queue per key (batches of two keys go side by side), and puts at most max items in a batch, the rest waiting for the next', async () => {
    const calls: Array<{ items: string[]; answer(): void }> = [];
    const run = batched(
      (_db: Knex, items: string[]) =>
        new Promise<string[]>((resolve) =>
          calls.push({ items, answer: () => resolve(items.map((i) => i.toUpperCase())) }),
        ),
      { keyOf: (item) => item[0]!, max: 2 },
    );
    const firsts = [run(db, 'a1'), run(db, 'b1')];
    const waiting = [run(db, 'a2'), run(db, 'a3'), run(db, 'a4'), run(db, 'b2')];
    expect(calls.map((c) => c.items)).toEqual([['a1'], ['b1']]);
    calls[0]!.answer();
    calls[1]!.answer();
    expect(await Promise.all(firsts)).toEqual(['A1', 'B1']);
    await tick();
    expect(calls.slice(2).map((c) => c.items)).toEqual([['a2', 'a3'], ['b2']]);
    calls[2]!.answer();
    calls[3]!.answer();
    await tick();
    expect(calls.slice(4).map((c) => c.items)).toEqual([['a4']]);
    calls[4]!.answer();
    expect(await Promise.all(waiting)).toEqual(['A2', 'A3', 'A4', 'B2']);
    // Drained: the next call of a key goes at once.
    const later = run(db, 'a5');
    expect(calls.slice(5).map((c) => c.items)).toEqual([['a5']]);
    calls[5]!.answer();
    expect(await later).toBe('A5');
  });
});

describe('batched, with parallel batches', () => {
  it('while one batch is under way, starts another with what came in this turn, up to `parallel`; what comes while all are under way waits for the next', async () => {
    const { calls, readMany } = manualReads();
    const read = batchedReads(readMany, 32, 2);
    const a = read(db, 'a');
    const b = read(db, 'b');
    const c = read(db, 'c');
    // The first goes at once; those of the same turn go together at its end, beside it.
    expect(calls.map((x) => x.keys)).toEqual([['a']]);
    await tick();
    expect(calls.map((x) => x.keys)).toEqual([['a'], ['b', 'c']]);
    // Two under way: the next waits for one of them to answer.
    const d = read(db, 'd');
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.answer({ b: 2, c: 3 });
    expect(await Promise.all([b, c])).toEqual([2, 3]);
    await tick();
    expect(calls.map((x) => x.keys)).toEqual([['a'], ['b', 'c'], ['d']]);
    calls[2]!.answer({ d: 4 });
    calls[0]!.answer({ a: 1 });
    expect(await Promise.all([a, d])).toEqual([1, 4]);
    // All answered: the next read goes out at once again.
    const e = read(db, 'e');
    expect(calls).toHaveLength(4);
    calls[3]!.answer({ e: 5 });
    expect(await e).toBe(5);
  });
});
