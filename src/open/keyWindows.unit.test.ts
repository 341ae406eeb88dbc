import { describe, expect, it } from 'vitest';
import {
  CURRENT_KEY_TTL_MS,
  JWKS_MAX_AGE_SECONDS,
  KEY_PUBLISHED_AHEAD_MS,
  publishedSince,
  SKEW_MS,
} from './keyWindows.ts';

/** Whether a key retired at `retiredAt` is in the key set at `now` (the store keeps retired_at > cutoff). */
const published = (retiredAt: number, now: number, ttlSeconds: number) => retiredAt > publishedSince(now, ttlSeconds);

describe('signing key windows', () => {
  it('publishes a rotated-in key longer ahead than relying parties cache the key set, by the skew allowance', () => {
    expect(KEY_PUBLISHED_AHEAD_MS).toBe(JWKS_MAX_AGE_SECONDS * 1000 + SKEW_MS);
    expect(KEY_PUBLISHED_AHEAD_MS).toBeGreaterThan(JWKS_MAX_AGE_SECONDS * 1000);
  });

  it('the key set a relying party cached just before a rotation has expired, on a fast clock too, before the new key signs', () => {
    const rotation = Date.UTC(2026, 10, 1);
    const cachedUntil = rotation + JWKS_MAX_AGE_SECONDS * 1000;
    const firstSignatureByAFastClock = rotation + KEY_PUBLISHED_AHEAD_MS - SKEW_MS;
    expect(firstSignatureByAFastClock).toBeGreaterThanOrEqual(cachedUntil);
  });

  describe('a retired key', () => {
    const retiredAt = Date.UTC(2026, 10, 1, 12);
    const ttl = 1800;
    // A process that loaded the key just before it retired signs with it for CURRENT_KEY_TTL_MS more;
    // that token lives ttl seconds, and a verifier's clock may run SKEW_MS behind.
    const lastTokenLastSeen = retiredAt + CURRENT_KEY_TTL_MS + ttl * 1000 + SKEW_MS;

    it('stays published while a token it signed can still be presented', () => {
      expect(published(retiredAt, retiredAt, ttl)).toBe(true);
      expect(published(retiredAt, retiredAt + ttl * 1000, ttl)).toBe(true);
      expect(published(retiredAt, lastTokenLastSeen - 1, ttl)).toBe(true);
    });

    it('leaves the key set once none can', () => {
      expect(published(retiredAt, lastTokenLastSeen, ttl)).toBe(false);
      expect(published(retiredAt, lastTokenLastSeen + 86_400_000, ttl)).toBe(false);
    });

    it('is kept one second longer for every second of token lifetime', () => {
      const now = retiredAt + 3_600_000;
      expect(publishedSince(now, ttl + 1)).toBe(publishedSince(now, ttl) - 1000);
      expect(published(retiredAt, retiredAt + 86_400_000, 86_400)).toBe(true);
    });
  });
});
