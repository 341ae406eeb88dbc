import { describe, expect, it } from 'vitest';
import { chosenCase } from './chosenCase.ts';

// The case a switch took, read off the nodes after it on a run's page; unsaid when it cannot be told.

const edges = [
  { from: 'in', to: 'route' },
  { from: 'route', to: 'a', case: 'urgent' },
  { from: 'route', to: 'b', case: 'billing' },
  { from: 'route', to: 'c', case: 'default' },
];
const statuses = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('chosenCase', () => {
  it('is the case whose targets ran while every other case has a skipped target', () => {
    expect(chosenCase('route', edges, statuses({ a: 'skipped', b: 'completed', c: 'skipped' }))).toBe('billing');
    expect(chosenCase('route', edges, statuses({ a: 'skipped', b: 'skipped', c: 'running' }))).toBe('default');
  });

  it('is unsaid while the nodes after it have not started, when cases share their targets, and for error edges', () => {
    expect(chosenCase('route', edges, statuses({ a: 'pending', b: 'pending', c: 'pending' }))).toBeUndefined();
    const shared = [...edges, { from: 'route', to: 'b', case: 'urgent' }].filter((e) => e.to !== 'a');
    expect(chosenCase('route', shared, statuses({ b: 'completed', c: 'skipped' }))).toBeUndefined();
    const errorRoute = [{ from: 'ask', to: 'x', case: 'error' }];
    expect(chosenCase('ask', errorRoute, statuses({ x: 'completed' }))).toBeUndefined();
    expect(chosenCase('in', edges, statuses({ route: 'completed' }))).toBeUndefined();
  });
});
