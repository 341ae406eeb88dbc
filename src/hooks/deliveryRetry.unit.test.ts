import { describe, expect, it } from 'vitest';
import { CALLBACK_RETRY, shortestRetrySpanSeconds } from './deliveries.ts';

describe('the retry schedule of callback deliveries', () => {
  it('doubles from the first delay, without a cap', () => {
    expect(shortestRetrySpanSeconds({ retryLimit: 4, retryDelay: 30, retryBackoff: true })).toBe(30 + 60 + 120 + 240);
  });

  it('caps each delay at retryDelayMax', () => {
    expect(shortestRetrySpanSeconds({ retryLimit: 4, retryDelay: 30, retryBackoff: true, retryDelayMax: 90 })).toBe(
      30 + 60 + 90 + 90,
    );
  });

  it('waits the same delay each time without backoff, and not at all without retries', () => {
    expect(shortestRetrySpanSeconds({ retryLimit: 3, retryDelay: 10, retryBackoff: false })).toBe(30);
    expect(shortestRetrySpanSeconds({ retryLimit: 0, retryDelay: 10, retryBackoff: true })).toBe(0);
  });

  it('reads a zero delay with backoff as one second, doubled (as pg-boss does)', () => {
    expect(shortestRetrySpanSeconds({ retryLimit: 3, retryDelay: 0, retryBackoff: true })).toBe(1 + 2 + 4);
  });

  it('keeps trying for at least a day, as Svix does: 15 attempts, 30 s doubling to 128 min, then every 4 h', () => {
    expect(CALLBACK_RETRY.retryLimit + 1).toBe(15);
    const delays = [30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 14_400, 14_400, 14_400, 14_400, 14_400];
    expect(shortestRetrySpanSeconds(CALLBACK_RETRY)).toBe(delays.reduce((a, b) => a + b));
    expect(shortestRetrySpanSeconds(CALLBACK_RETRY)).toBeGreaterThanOrEqual(24.2 * 3600);
  });
});
