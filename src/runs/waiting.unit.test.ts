import { describe, expect, it } from 'vitest';
import { listenForRunEnds, MAX_WAIT_SECONDS, preferredWait, readWhenEnded, type RunEndedFeed } from './waiting.ts';

describe('preferredWait (RFC 7240)', () => {
  it('reads wait=N among other preferences, case-insensitively, and caps it at 60', () => {
    expect(preferredWait('wait=5')).toBe(5);
    expect(preferredWait('respond-async, WAIT=12')).toBe(12);
    expect(preferredWait('wait="7"; x=y')).toBe(7);
    expect(preferredWait('wait=3600')).toBe(MAX_WAIT_SECONDS);
  });

  it('never drops a numeric wait silently (issue 33): a fraction is rounded up, a huge value cut to 60', () => {
    expect(preferredWait('wait=1.5')).toBe(2);
    expect(preferredWait('wait=0.2')).toBe(1);
    expect(preferredWait('wait=99999999999999999999')).toBe(MAX_WAIT_SECONDS);
    expect(preferredWait('wait=1e3')).toBeUndefined();
  });

  it('ignores absent, unknown and malformed preferences', () => {
    for (const header of [undefined, '', 'return=minimal', 'wait=', 'wait=-1', 'wait=soon'])
      expect(preferredWait(header)).toBeUndefined();
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
  /** A listener begun on `feed`, following `runId`. */
  async function following(feed: RunEndedFeed, runId: string) {
    const listener = await listenForRunEnds(feed);
    listener.follow(runId);
    return listener;
  }

  it('reads again only on a notice for its run (or a reconnect), and stops when the run is terminal', async () => {
    const { feed, tell, listeners } = manualFeed();
    const states = ['running', 'running', 'running', 'completed'];
    let reads = 0;
    const read = async () => ({ status: states[reads++]! });
    const listener = await following(feed, 'run_a');
    const done = readWhenEnded(listener, 30, read);
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
    listener.stop();
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
    const done = readWhenEnded(await following(feed, 'run_a'), 30, read);
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toBe(2); // not waiting for a second notice
    tell('run_a');
    expect(await done).toEqual({ status: 'completed' });
  });

  it('for a run queued after the listener began, reads it only after a notice of its end (or at the deadline), counting notices heard before the run was named', async () => {
    const { feed, tell } = manualFeed();
    const reads: boolean[] = [];
    const read = async (noticed: boolean) => {
      reads.push(noticed);
      return { status: 'completed', logs: ['whole'] };
    };
    // A POST: the listener begins, the run is queued, then named.
    let listener = await listenForRunEnds(feed);
    tell('run_other'); // another run's end while the run is being queued: not its own
    listener.follow('run_a');
    const done = readWhenEnded(listener, 30, read, undefined, { status: 'queued' });
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toEqual([]); // no first read
    tell('run_a');
    expect(await done).toEqual({ status: 'completed', logs: ['whole'] });
    expect(reads).toEqual([true]);

    // Its end (or a reconnect) heard before the run was named: read at once.
    for (const early of ['run_b', null]) {
      reads.length = 0;
      listener = await listenForRunEnds(feed);
      tell(early);
      listener.follow('run_b');
      expect(await readWhenEnded(listener, 30, read, undefined, { status: 'queued' })).toEqual({
        status: 'completed',
        logs: ['whole'],
      });
      expect(reads).toEqual([true]);
    }
    // A wait already over: one read.
    reads.length = 0;
    expect(await readWhenEnded(await following(feed, 'run_c'), 0, read, undefined, { status: 'queued' })).toEqual({
      status: 'completed',
      logs: ['whole'],
    });
    expect(reads).toEqual([false]);
  });

  it('answers at the deadline with a last read', async () => {
    const { feed } = manualFeed();
    let reads = 0;
    const result = await readWhenEnded(await following(feed, 'run_a'), 0.05, async () => ({
      status: reads++ === 0 ? 'queued' : 'running',
    }));
    expect(result).toEqual({ status: 'running' });
    expect(reads).toBe(2);
  });
});
