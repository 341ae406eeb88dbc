// The compute pool with real child processes: what a run computes runs there under a heap cap and
// a time limit, a call that breaks either fails alone while this process lives, and waiting calls
// are served owner by owner with a cap per owner (budgets, not per-render limits).
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionError } from './functions.ts';
import { ComputeLimitError, ComputePool, type PoolLimits } from './pool.ts';

const RANGE_BOMB = '{% for i in (1..9999999) %}{% endfor %}done'; // the audit's crash template
const CAPTURE_DOUBLING =
  '{% assign s = "x" %}{% for i in (1..28) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}{{ s }}';
const SLOW = '{% for i in (1..9000000) %}{% endfor %}slow'; // seconds of rendering, far past the limits below

let pool: ComputePool | undefined;
afterEach(() => pool?.close());

function start(limits: Partial<PoolLimits> = {}): ComputePool {
  pool = new ComputePool({ processes: 1, heapMb: 64, timeLimitMs: 10_000, ownerMaxProcesses: 1, ...limits });
  return pool;
}

const render = (p: ComputePool, source: string, owner = 'a', extra: { signal?: AbortSignal; maxChars?: number } = {}) =>
  p.run(
    'renderTemplate',
    { source, scope: { inputs: { name: 'Ada' }, nodes: {} } },
    { owner, maxChars: extra.maxChars ?? 1_000_000, ...(extra.signal ? { signal: extra.signal } : {}) },
  );

describe('compute pool', () => {
  it('runs a named function on a child process and returns its value; its own failure keeps its code', async () => {
    const p = start();
    expect(await render(p, 'Hello {{ inputs.name | upcase }}')).toBe('Hello ADA');
    const failure = await render(p, '{{ inputs.name | no_such_filter }}').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(FunctionError);
    expect(failure).toMatchObject({ code: 'template_error' });
  });

  it('a call that exhausts its heap fails with a memory limit; this process lives and the next call gets a new child', async () => {
    const p = start();
    const failure = await render(p, RANGE_BOMB).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ComputeLimitError);
    expect(failure).toMatchObject({ kind: 'memory' });
    expect(await render(p, 'still {{ inputs.name }}')).toBe('still Ada');
    expect(p.stats().limits).toEqual({ time: 0, memory: 1, too_large: 0 }); // what /metrics reports
  });

  it('a call past its time limit is killed with its child: a time limit, and the slot is replaced', async () => {
    const p = start({ timeLimitMs: 100 });
    const failure = await render(p, SLOW).catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'time', message: expect.stringContaining('COMPUTE_TIME_LIMIT_MS') });
    expect(await render(p, 'after')).toBe('after');
  });

  it('a value longer than the call allows never crosses back: too_large (the doubled capture of the audit)', async () => {
    const p = start();
    await expect(render(p, CAPTURE_DOUBLING)).rejects.toMatchObject({ kind: 'too_large' });
    await expect(render(p, '{{ inputs.name }}{{ inputs.name }}', 'a', { maxChars: 5 })).rejects.toMatchObject({
      kind: 'too_large',
    });
  });

  it('an abort stops a running call (its child is killed) and drops a waiting one, each rejecting with the reason', async () => {
    const p = start();
    const controller = new AbortController();
    const running = render(p, SLOW, 'a', { signal: controller.signal }).catch((e: unknown) => e);
    const waiting = render(p, 'never', 'a', { signal: controller.signal }).catch((e: unknown) => e);
    expect(p.stats()).toMatchObject({ running: 1, waiting: 1 });
    controller.abort(new Error('run cancelled'));
    expect(await running).toMatchObject({ message: 'run cancelled' });
    expect(await waiting).toMatchObject({ message: 'run cancelled' });
    expect(p.stats()).toMatchObject({ running: 0, waiting: 0 });
    expect(await render(p, 'next')).toBe('next');
  });

  it("serves owners in turn: another owner's call goes before the rest of a busy owner's calls", async () => {
    const p = start();
    const order: string[] = [];
    const call = (owner: string, label: string) => render(p, label, owner).then((v) => void order.push(v));
    await Promise.all([call('a', 'a1'), call('a', 'a2'), call('a', 'a3'), call('b', 'b1')]);
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('an owner holds at most its share of the slots; the others stay for other owners', async () => {
    const p = start({ processes: 2, ownerMaxProcesses: 1 });
    const calls = [render(p, 'a1'), render(p, 'a2'), render(p, 'a3')];
    expect(p.stats()).toMatchObject({ running: 1, waiting: 2 });
    calls.push(render(p, 'b1', 'b'));
    expect(p.stats()).toMatchObject({ running: 2, waiting: 2 });
    expect(await Promise.all(calls)).toEqual(['a1', 'a2', 'a3', 'b1']);
  });
});
