import { describe, expect, it } from 'vitest';
import { MAX_WAIT_SECONDS, preferredWait, readWhenEnded, type RunEndedFeed } from './waiting.ts';

describe('preferredWait (RFC 7240)', () => {
  it('reads wait=N among other preferences, case-insensitively, and caps it at 60', () => {
    expect(preferredWait('wait=5')).toBe(5);
    expect(preferredWait('respond-async, WAIT=12')).toBe(12);
    expect(preferredWait('wait="7"; x=y')).toBe(7);
    expect(preferredWait('wait=3600')).toBe(MAX_WAIT_SECONDS);
  });

  it('ignores absent, unknown and malformed preferences', () => {
    for (const header of [undefined, '', 'return=minimal', 'wait=', 'wait=-1', 'wait=soon']) expect(preferredWait(header)).toBeUndefined();
  });
});

describe('readWhenEnded', () => {
  /** A feed the test drives by hand, as the queue's LISTEN connection would. */
  function manualFeed() {
    const listeners = new Set<(id: string | null) => void>();
    const feed: RunEndedFeed = async (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    };
    return { feed, tell: (id: string | null) => listeners.forEach((l) => l(id)), listeners };
  }

  it('reads again only on a notice for its run (or a reconnect), and stops when the run is terminal', async () => {
    const { feed, tell, listeners } = manualFeed();
    const states = ['running', 'running', 'running', 'completed'];
    let reads = 0;
    const read = async () => ({ status: states[reads++]! });
    const done = readWhenEnded(feed, 'run_a', 30, read);
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toBe(1);
    tell('run_other');
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toBe(1); // another run's end does not wake it
    tell(null);
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toBe(2);
    tell('run_a');
    await new Promise((r) => setTimeout(r, 10));
    tell('run_a');
    expect(await done).toEqual({ status: 'completed' });
    expect(listeners.size).toBe(0);
  });

  it('reads again after a notice that came while it was reading (the read may predate the end)', async () => {
    const { feed, tell } = manualFeed();
    const states = ['running', 'running', 'completed'];
    let reads = 0;
    const read = async () => {
      const status = states[reads++]!;
      if (reads === 1) tell('run_a'); // the run ends (and is announced) while the first read is on its way back
      return { status };
    };
    const done = readWhenEnded(feed, 'run_a', 30, read);
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toBe(2); // not waiting for a second notice
    tell('run_a');
    expect(await done).toEqual({ status: 'completed' });
  });

  it('with a peek, looks at the status first and reads the run whole only after its end (or at the deadline)', async () => {
    const { feed, tell } = manualFeed();
    const reads: boolean[] = [];
    let peeks = 0;
    const read = async (noticed: boolean) => {
      reads.push(noticed);
      return { status: 'completed', logs: ['whole'] };
    };
    const done = readWhenEnded(feed, 'run_a', 30, read, undefined, async () => ({ status: (peeks++, 'queued') }));
    await new Promise((r) => setTimeout(r, 10));
    expect([peeks, reads]).toEqual([1, []]);
    tell('run_a');
    expect(await done).toEqual({ status: 'completed', logs: ['whole'] });
    expect(reads).toEqual([true]);

    // Ended before the peek, or a wait already over: one whole read.
    reads.length = 0;
    expect(await readWhenEnded(feed, 'run_b', 30, read, undefined, async () => ({ status: 'failed' }))).toEqual({ status: 'completed', logs: ['whole'] });
    expect(await readWhenEnded(feed, 'run_c', 0, read, undefined, async () => ({ status: 'queued' }))).toEqual({ status: 'completed', logs: ['whole'] });
    expect(reads).toEqual([false, false]);
  });

  it('answers at the deadline with a last read', async () => {
    const { feed } = manualFeed();
    let reads = 0;
    const result = await readWhenEnded(feed, 'run_a', 0.05, async () => ({ status: reads++ === 0 ? 'queued' : 'running' }));
    expect(result).toEqual({ status: 'running' });
    expect(reads).toBe(2);
  });
});
