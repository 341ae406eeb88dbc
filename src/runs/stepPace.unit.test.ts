// The per-user step pace (USER_STEPS_PER_SECOND) on a clock of the test's own: a user's burst goes
// at once, their next steps wait their turns in the order they came, another user's steps do not
// wait, and a step whose run stops while it waits is let go at once.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StepPacer } from './stepPace.ts';

describe('StepPacer', () => {
  beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => void vi.useRealTimers());

  /** Takes `n` turns of `owner` and records, in order, which of them started. */
  function takeMany(pacer: StepPacer, owner: string, n: number, started: string[], signal?: AbortSignal) {
    return Array.from({ length: n }, (_, i) => pacer.take(owner, signal).then(() => void started.push(`${owner}${i}`)));
  }

  it('lets a quiet user start `rate` steps at once, then one every 1/rate s, in the order they came', async () => {
    const pacer = new StepPacer(10);
    const started: string[] = [];
    const turns = takeMany(pacer, 'alice', 13, started);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toHaveLength(10);
    expect(pacer.stats()).toEqual({ paced: 3, waiting: 3 });
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual(Array.from({ length: 11 }, (_, i) => `alice${i}`));
    await vi.advanceTimersByTimeAsync(200);
    await Promise.all(turns);
    expect(started.at(-1)).toBe('alice12');
    expect(pacer.stats()).toEqual({ paced: 3, waiting: 0 });
  });

  it("another user's steps do not wait behind a user past their pace", async () => {
    const pacer = new StepPacer(5);
    const started: string[] = [];
    void takeMany(pacer, 'alice', 50, started);
    await pacer.take('bob');
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toHaveLength(5);
    expect(pacer.stats().waiting).toBe(45);
  });

  it('gives a user who was quiet for a second their whole burst again', async () => {
    const pacer = new StepPacer(4);
    const started: string[] = [];
    await Promise.all(takeMany(pacer, 'alice', 4, started));
    await vi.advanceTimersByTimeAsync(1000);
    void takeMany(pacer, 'alice', 4, started);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toHaveLength(8);
    expect(pacer.stats().paced).toBe(0);
  });

  it('lets a waiting step go with the reason when its run stops', async () => {
    const pacer = new StepPacer(1);
    const stop = new AbortController();
    await pacer.take('alice');
    const waiting = pacer.take('alice', stop.signal);
    stop.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(pacer.stats().waiting).toBe(0);
    await expect(pacer.take('alice', stop.signal)).rejects.toThrow('cancelled');
  });
});
