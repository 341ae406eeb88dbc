import { describe, expect, it } from 'vitest';
import { meetsGoal } from './table.ts';

describe('meetsGoal', () => {
  it('reads the goal of a ratio from a row target, at least or at most', () => {
    expect(meetsGoal('≥ 1.2x', 1.2)).toBe(true);
    expect(meetsGoal('≥ 1.2x', 1.19)).toBe(false);
    expect(meetsGoal('≥ 8x', 13.3)).toBe(true);
    expect(meetsGoal('p50 ≤ 2x idle', 1.71)).toBe(true);
    expect(meetsGoal('p50 ≤ 0.33x n8n (ratio of p50)', 0.4)).toBe(false);
    expect(meetsGoal('≥ 0.40x bare Express', 0.27)).toBe(false);
  });

  it('says nothing when the target states no ratio or the row has none', () => {
    expect(meetsGoal('p99; events reach the other API', 2)).toBeUndefined();
    expect(meetsGoal(undefined, 2)).toBeUndefined();
    expect(meetsGoal('≥ 1.2x', undefined)).toBeUndefined();
    expect(meetsGoal('≥ 1.2x', Number.NaN)).toBeUndefined();
  });
});
