import { describe, expect, it } from 'vitest';
import { PrincipalLease, revocationLease } from './principalLease.ts';

/** A lease on a clock the test moves, with a store read that counts its calls and may take time. */
function leaseWithCountedStore(leaseMs: number) {
  let clock = 1_000;
  const lease = new PrincipalLease(leaseMs, { now: () => clock });
  const store = {
    reads: 0,
    readTakesMs: 0,
    answer: { principal: { userId: 7 } } as { principal: { userId: number }; expiresAt?: number } | null,
  };
  const read = async () => {
    store.reads += 1;
    clock += store.readTakesMs;
    return store.answer;
  };
  return { lease, store, read, advance: (ms: number) => (clock += ms) };
}

describe('the principal lease', () => {
  it('serves a principal from the cache within the lease: the store is read once', async () => {
    const { lease, store, read, advance } = leaseWithCountedStore(200);
    expect(await lease.principal('apiKey', 'sk_a', read)).toEqual({ userId: 7 });
    advance(150);
    expect(await lease.principal('apiKey', 'sk_a', read)).toEqual({ userId: 7 });
    expect(store.reads).toBe(1);
    expect(lease.holds('apiKey', 'sk_a')).toBe(true);
    // Another token, or the same token of another kind, is another entry.
    await lease.principal('apiKey', 'sk_b', read);
    await lease.principal('oauth', 'sk_a', read);
    expect(store.reads).toBe(3);
  });

  it('counts the lease from when the read began, not from when it answered', async () => {
    const { lease, store, read, advance } = leaseWithCountedStore(200);
    store.readTakesMs = 120;
    await lease.principal('oauth', 'gho_x', read); // began at 1000, answered at 1120
    advance(79); // 1199: still within the lease
    store.readTakesMs = 0;
    await lease.principal('oauth', 'gho_x', read);
    expect(store.reads).toBe(1);
    advance(1); // 1200: the lease is over although only 80 ms passed since the answer
    expect(lease.holds('oauth', 'gho_x')).toBe(false);
    await lease.principal('oauth', 'gho_x', read);
    expect(store.reads).toBe(2);
  });

  it('never serves a credential past its own expiry', async () => {
    const { lease, store, read, advance } = leaseWithCountedStore(200);
    store.answer = { principal: { userId: 7 }, expiresAt: Date.now() + 50 };
    await lease.principal('proxy', 'a.b.c', read);
    advance(60);
    await lease.principal('proxy', 'a.b.c', read);
    expect(store.reads).toBe(2);
  });

  it('does not cache a refusal: a token the store refuses is read again each time', async () => {
    const { lease, store, read } = leaseWithCountedStore(200);
    store.answer = null;
    expect(await lease.principal('apiKey', 'sk_gone', read)).toBeNull();
    expect(await lease.principal('apiKey', 'sk_gone', read)).toBeNull();
    expect(store.reads).toBe(2);
  });

  it('shares a read under way with requests that arrive within its lease, and only those', async () => {
    let clock = 1_000;
    const lease = new PrincipalLease(200, { now: () => clock });
    const answers: ((found: { principal: { userId: number } } | null) => void)[] = [];
    const read = () => new Promise<{ principal: { userId: number } } | null>((resolve) => answers.push(resolve));
    const first = lease.principal('oauth', 'gho_y', read); // its read begins at 1000
    clock += 150;
    const second = lease.principal('oauth', 'gho_y', read); // 1150: shares it
    expect(answers).toHaveLength(1);
    clock += 60;
    const third = lease.principal('oauth', 'gho_y', read); // 1210: a read begun at 1000 is too old to share
    expect(answers).toHaveLength(2);
    answers[0]!({ principal: { userId: 8 } });
    answers[1]!({ principal: { userId: 9 } });
    expect(await Promise.all([first, second, third])).toEqual([{ userId: 8 }, { userId: 8 }, { userId: 9 }]);
    // A refusal answers the requests that shared its read, and is not kept.
    clock += 1_000;
    const refused = [lease.principal('oauth', 'gho_y', read), lease.principal('oauth', 'gho_y', read)];
    expect(answers).toHaveLength(3);
    answers[2]!(null);
    expect(await Promise.all(refused)).toEqual([null, null]);
    const again = lease.principal('oauth', 'gho_y', read);
    expect(answers).toHaveLength(4);
    answers[3]!({ principal: { userId: 8 } });
    expect(await again).toEqual({ userId: 8 });
  });

  it('throws a read that throws to the requests that shared it, and keeps nothing', async () => {
    const lease = new PrincipalLease(200, { now: () => 1_000 });
    const outcomes: ((found: { principal: { userId: number } } | Error) => void)[] = [];
    const read = () =>
      new Promise<{ principal: { userId: number } }>((resolve, reject) =>
        outcomes.push((found) => (found instanceof Error ? reject(found) : resolve(found))),
      );
    const refusal = new Error('refused');
    const both = [lease.principal('issuance', '7:3:12:acme', read), lease.principal('issuance', '7:3:12:acme', read)];
    expect(outcomes).toHaveLength(1); // the second shares the first's read
    outcomes[0]!(refusal);
    for (const request of both) await expect(request).rejects.toBe(refusal);
    expect(lease.holds('issuance', '7:3:12:acme', false)).toBe(false);
    const again = lease.principal('issuance', '7:3:12:acme', read);
    expect(outcomes).toHaveLength(2); // read again
    outcomes[1]!({ principal: { userId: 7 } });
    expect(await again).toEqual({ userId: 7 });
  });

  it('with a lease of 0 reads the store every time', async () => {
    const { lease, store, read } = leaseWithCountedStore(0);
    await lease.principal('apiKey', 'sk_a', read);
    await lease.principal('apiKey', 'sk_a', read);
    expect(store.reads).toBe(2);
    expect(lease.holds('apiKey', 'sk_a')).toBe(false);
  });

  it('settle() resolves only once the longest lease of the process has passed since the commit', async () => {
    new PrincipalLease(40);
    const committedAt = performance.now();
    await revocationLease.settle(committedAt);
    expect(performance.now() - committedAt).toBeGreaterThanOrEqual(40);
  });
});
