import { describe, expect, it } from 'vitest';
import {
  hashPassword,
  passwordNeedsRehash,
  hashToken,
  newClientId,
  newToken,
  safeEqual,
  verifyPassword,
} from './crypto.ts';

describe('tokens, hashes and passwords', () => {
  it('makes prefixed tokens with 256 random bits, never the same twice', () => {
    const a = newToken('gho');
    expect(a).toMatch(/^gho_[A-Za-z0-9_-]{43}$/);
    expect(newToken('gho')).not.toBe(a);
    expect(newClientId()).toMatch(/^app_[0-9a-f]{20}$/);
  });

  it('never hands out the same random bytes twice across refills of its pool (300 tokens: past 128 a pool)', () => {
    const tokens = Array.from({ length: 300 }, () => newToken('ghr'));
    expect(new Set(tokens).size).toBe(300);
    const chunks = tokens.map((t) => t.slice(4));
    expect(chunks.every((c) => c.length === 43 && c !== 'A'.repeat(43))).toBe(true);
  });

  it('hashes tokens to SHA-256 hex (64 chars), deterministically', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compares strings in constant time, including different lengths', () => {
    expect(safeEqual('same', 'same')).toBe(true);
    expect(safeEqual('same', 'sane')).toBe(false);
    expect(safeEqual('short', 'longer')).toBe(false);
  });

  it('hashes passwords with a fresh salt and verifies only the right one', async () => {
    const first = await hashPassword('hunter22');
    const second = await hashPassword('hunter22');
    expect(first).not.toBe(second);
    // The suite's lowered cost (test/support/passwordCost.ts); the default is proven in accounts/passwordHashing.test.ts.
    expect(first.startsWith('scrypt$1024$8$1$')).toBe(true);
    expect(await verifyPassword('hunter22', first)).toBe(true);
    expect(await verifyPassword('hunter23', first)).toBe(false);
    expect(await verifyPassword('hunter22', 'not-a-hash')).toBe(false);
    expect(passwordNeedsRehash(first)).toBe(false);
  });

  it('refuses stored hashes whose parameters are out of bounds instead of computing them', async () => {
    const [, , , , salt, hash] = (await hashPassword('hunter22')).split('$');
    for (const params of ['2097152$8$1', '1000$8$1', '1024$64$1', '1024$8$16', '1024$x$1']) {
      expect(await verifyPassword('hunter22', `scrypt$${params}$${salt}$${hash}`)).toBe(false);
    }
    expect(passwordNeedsRehash(`scrypt$512$8$1$${salt}$${hash}`)).toBe(true);
  });
});
