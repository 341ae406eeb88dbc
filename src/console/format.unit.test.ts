import { describe, expect, it } from 'vitest';
import {
  countOf,
  formatDate,
  formatDuration,
  formatMoney,
  formatTokens,
  isoDate,
  secondsBetween,
  statusWords,
  tokenSplit,
} from './format.ts';

// The formatters the views and the browser scripts share (src/console/browser/ imports this very
// module): a row the run page rewrites live reads as the server renders it.

describe('the console formatters', () => {
  it('writes a timestamp to the minute, in UTC', () => {
    expect(formatDate(Date.UTC(2026, 10, 23, 16, 49, 59))).toBe('2026-11-23 16:49 UTC');
    expect(isoDate('2026-11-23T16:49:05.123Z')).toBe('2026-11-23 16:49 UTC');
    expect(isoDate('2026-11-23T17:49:05+01:00')).toBe('2026-11-23 16:49 UTC');
    expect(isoDate(null)).toBe('—');
  });

  it('writes a duration as people read it: hundredths under 10 s, whole seconds under a minute, then minutes', () => {
    expect(formatDuration(0.4219)).toBe('0.42 s');
    expect(formatDuration(9.994)).toBe('9.99 s');
    expect(formatDuration(12.4)).toBe('12 s');
    expect(formatDuration(59.4)).toBe('59 s');
    expect(formatDuration(185)).toBe('3 min 05 s');
    expect(formatDuration(3600)).toBe('60 min 00 s');
    expect(formatDuration(null)).toBe('—');
  });

  it('measures the seconds between two timestamps, none while one is missing', () => {
    expect(secondsBetween('2026-11-23T16:49:00Z', '2026-11-23T16:49:01.500Z')).toBe(1.5);
    expect(secondsBetween('2026-11-23T16:49:00Z', null)).toBeNull();
    expect(secondsBetween(undefined, '2026-11-23T16:49:00Z')).toBeNull();
  });

  it('writes statuses, token splits and counts in words', () => {
    expect(statusWords('not_started')).toBe('not started');
    expect(statusWords('completed')).toBe('completed');
    expect(tokenSplit({ prompt_tokens: 12, completion_tokens: 30 })).toBe('12 in, 30 out');
    expect(countOf(1, 'problem')).toBe('1 problem');
    expect(countOf(3, 'problem')).toBe('3 problems');
    expect(countOf(2, 'retry', 'retries')).toBe('2 retries');
  });

  it('writes money in its currency: cents from one unit up, up to six decimals under it', () => {
    expect(formatMoney(1234.5, 'USD')).toBe('$1,234.50');
    expect(formatMoney(0.5, 'USD')).toBe('$0.50');
    expect(formatMoney(0.00012, 'USD')).toBe('$0.00012');
    expect(formatMoney(0, 'EUR')).toBe('€0.00');
    expect(formatMoney(0.0000001, 'USD')).toBe('$0.00');
    expect(formatTokens(12345)).toBe('12,345');
  });
});
