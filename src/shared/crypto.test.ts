import { describe, expect, it } from 'vitest';
import { hashPassword, hashToken, newClientId, newToken, safeEqual, verifyPassword } from './crypto.ts';

describe('tokens, hashes and passwords', () => {
  it('makes prefixed tokens with 256 random bits, never the same twice', () => {
    const a = newToken('gho');
    expect(a).toMatch(/^gho_[A-Za-z0-9_-]{43}$/);
    expect(newToken('gho')).not.toBe(a);
    expect(newClientId()).toMatch(/^app_[0-9a-f]{20}$/);
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
    expect(first.startsWith('scrypt$32768$8$1$')).toBe(true);
    expect(await verifyPassword('hunter22', first)).toBe(true);
    expect(await verifyPassword('hunter23', first)).toBe(false);
    expect(await verifyPassword('hunter22', 'not-a-hash')).toBe(false);
  });
});
