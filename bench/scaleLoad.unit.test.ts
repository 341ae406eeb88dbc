// Row 10's count of runs whose events reached an event stream of the other API process: what one
// stream must have carried to count (bench/scaleLoad.ts judgeStream).
import { describe, expect, it } from 'vitest';
import { judgeStream } from './scaleLoad.ts';

const finished = (status: string, finishedAt: string) => ({
  id: '',
  event: 'run.finished',
  data: JSON.stringify({ status, finished_at: finishedAt }),
});
const events = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: String(i + 1), event: 'node.started', data: '{}' }));
const at = '2026-11-24T20:00:00.000Z';

describe('judgeStream', () => {
  it('counts a stream whose events are numbered 1..n without a gap and end with the completed run', () => {
    const stream = [...events(4), { ...finished('completed', at), id: '5' }];
    expect(judgeStream(stream, Date.parse(at) - 10)).toEqual({ reached: true, live: true });
    expect(judgeStream(stream, Date.parse(at) + 10)).toEqual({ reached: true, live: false });
  });

  it('does not count a stream with a missing event', () => {
    const stream = [
      ...events(2),
      { id: '4', event: 'node.finished', data: '{}' },
      { ...finished('completed', at), id: '5' },
    ];
    expect(judgeStream(stream, 0)).toMatchObject({ reached: false, problem: 'event 3 had id 4' });
  });

  it('does not count a stream that ended before run.finished, or a run that did not complete', () => {
    expect(judgeStream(events(3), 0)).toMatchObject({
      reached: false,
      problem: 'the stream ended after 3 events without run.finished',
    });
    expect(judgeStream([...events(1), { ...finished('failed', at), id: '2' }], 0)).toMatchObject({
      reached: false,
      problem: 'the run ended failed',
    });
  });
});
