import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lookupOf, newTriggerToken, shownPrefix, TRIGGER_TOKEN_PREFIX } from './triggerTokens.ts';

describe('trigger tokens', () => {
  it('are wht_ and base64url of 32 random bytes, never the same twice', () => {
    expect(TRIGGER_TOKEN_PREFIX).toBe('wht');
    const tokens = Array.from({ length: 50 }, () => newTriggerToken().token);
    for (const token of tokens) {
      expect(token).toMatch(/^wht_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('store the SHA-256 of the whole token, never the token, and a lookup of its first 12 characters', () => {
    const { token, lookup, hash } = newTriggerToken();
    expect(lookup).toBe(token.slice(4, 16));
    expect(hash).not.toContain(token.slice(4));
    expect(hash).toBe(sha256Hex(token));
  });

  it('find their row by the lookup a presented token carries', () => {
    const { token, lookup } = newTriggerToken();
    expect(lookupOf(token)).toBe(lookup);
  });

  it.each([
    ['one character short', (t: string) => t.slice(0, -1)],
    ['one character long', (t: string) => `${t}A`],
    ['another prefix', (t: string) => `whx${t.slice(3)}`],
    ['the prefix in capitals', (t: string) => `WHT${t.slice(3)}`],
    ['no separator', (t: string) => `wht-${t.slice(4)}`],
    ['an API key', () => `gho_${'a'.repeat(43)}`],
    ['empty', () => ''],
  ])('read no row for a token %s', (_what, change) => {
    expect(lookupOf(change(newTriggerToken().token))).toBeUndefined();
  });

  it('show 8 characters of the lookup in lists: enough to tell triggers apart, too few to find one', () => {
    const { token, lookup } = newTriggerToken();
    expect(shownPrefix(lookup)).toBe(token.slice(0, 12));
    expect(shownPrefix(lookup)).toMatch(/^wht_[A-Za-z0-9_-]{8}$/);
  });
});

/** The SHA-256 hex digest of a token, computed apart from src/shared/crypto.ts. */
function sha256Hex(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
