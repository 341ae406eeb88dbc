import { describe, expect, it } from 'vitest';
import type { GraphSnapshot, RunDetail, RunMark, RunStep } from '../../runs/service.ts';
import { ITEM_ROWS_MAX, runTimeline } from './timelineModel.ts';
import { timelineSection } from './timeline.ts';

// The timeline's numbers for the cases a stored run can be in beyond the page test's completed
// one: a run going on (the axis ends now), a log without events (older runs), a retry event
// without its time, a step reused from the run retried, an approval still waiting, a map's items
// (a row each, at most ITEM_ROWS_MAX).

const T0 = Date.UTC(2026, 10, 28, 8, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();

const graph: GraphSnapshot = {
  version: 1,
  nodes: [
    { id: 'a', type: 'text_input', config: { variable: 'x' } },
    { id: 'b', type: 'llm_call', config: { model: 'echo' } },
    {
      id: 'c',
      type: 'map',
      config: { over: '{{ nodes.a.output }}', workflow_id: 'wf_x' },
    } as GraphSnapshot['nodes'][number],
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
};

const step = (node_id: string, from: number | null, to: number | null, more: Partial<RunStep> = {}): RunStep => ({
  node_id,
  node_type: 'llm_call',
  status: to === null ? 'running' : 'completed',
  started_at: from === null ? null : at(from),
  finished_at: to === null ? null : at(to),
  input: null,
  output: null,
  truncated: false,
  usage: null,
  error: null,
  ...more,
});

const run = (logs: RunStep[], more: Partial<RunDetail> = {}): RunDetail => ({
  id: 'run_1',
  workflow_id: 'wf_1',
  status: 'running',
  inputs: {},
  output: null,
  error: null,
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  duration: null,
  created_at: at(0),
  started_at: at(1000),
  finished_at: null,
  logs,
  ...more,
});

const kinds = (segments: { kind: string; from: number; to: number }[]) =>
  segments.map((s) => [s.kind, s.from - T0, s.to - T0]);

describe('a run timeline', () => {
  it('ends its axis now while the run goes on: the node running and the run itself reach now', () => {
    const t = runTimeline(run([step('a', 1000, 1000), step('b', 1500, null)]), graph, [], T0 + 5000);
    expect(t.end - T0).toBe(5000);
    expect(kinds(t.run.segments)).toEqual([
      ['queued', 0, 1000],
      ['running', 1000, 5000],
    ]);
    const b = t.rows.find((r) => r.id === 'b')!;
    expect(kinds(b.segments)).toEqual([
      ['queued', 1000, 1500],
      ['running', 1500, 5000],
    ]);
    expect(b.took).toBe(3500);
    expect(t.slowest).toBe('b');
    expect(t.rows.find((r) => r.id === 'c')).toMatchObject({ note: 'not yet', segments: [] });

    // A start stored as an event before its log entry: running from then.
    const marks: RunMark[] = [{ type: 'node.started', data: { node_id: 'c', started_at: at(4000) } }];
    const early = runTimeline(run([step('a', 1000, 1000), step('b', 1500, 3000)]), graph, marks, T0 + 5000);
    expect(early.rows.find((r) => r.id === 'c')).toMatchObject({ status: 'running', took: 1000 });
  });

  it('draws a log without events from its steps alone, and a retry event without its time as a count only', () => {
    const marks: RunMark[] = [{ type: 'node.retry', data: { node_id: 'b', attempt: 2, delay_ms: 500 } }];
    const t = runTimeline(
      run([step('a', 1000, 1000), step('b', 1000, 4000, { attempts: 2 })], { status: 'failed', finished_at: at(4000) }),
      graph,
      marks,
      T0 + 60_000,
    );
    expect(t.end - T0).toBe(4000);
    const b = t.rows.find((r) => r.id === 'b')!;
    expect(kinds(b.segments)).toEqual([['running', 1000, 4000]]);
    expect(b.attempts).toBe(2);
    expect(t.rows.find((r) => r.id === 'c')).toMatchObject({ status: 'not_started', note: 'not started' });
  });

  it("draws no bar for a step reused from the run retried (its times are that run's), and counts what follows from this run's start", () => {
    const t = runTimeline(
      run([step('a', -90_000, -90_000, { reused_from: 'run_0' }), step('b', 1000, 2000)], {
        retry_of: 'run_0',
        status: 'completed',
        finished_at: at(2000),
      }),
      graph,
      [],
      T0 + 60_000,
    );
    expect(t.rows[0]).toMatchObject({ id: 'a', note: 'reused from run_0', segments: [], took: null });
    expect(kinds(t.rows[1]!.segments)).toEqual([['running', 1000, 2000]]);
  });

  it('draws an approval still waiting up to now, and the run waiting from then on', () => {
    const marks: RunMark[] = [
      { type: 'node.started', data: { node_id: 'b', started_at: at(2000) } },
      { type: 'node.waiting', data: { node_id: 'b' } },
    ];
    const t = runTimeline(
      run([step('a', 1000, 1000), step('b', 2000, null, { status: 'waiting' })], { status: 'waiting' }),
      graph,
      marks,
      T0 + 10_000,
    );
    expect(kinds(t.rows[1]!.segments)).toEqual([
      ['queued', 1000, 2000],
      ['waiting', 2000, 10_000],
    ]);
    expect(kinds(t.run.segments)).toEqual([
      ['queued', 0, 1000],
      ['running', 1000, 2000],
      ['waiting', 2000, 10_000],
    ]);
  });

  it("counts a map's items from their steps, and says when the run's detail left some out", () => {
    const items = [0, 1, 2].flatMap((i) => [step(`c[${i}].x`, 3000, 3500), step(`c[${i}].y`, 3500, 4000)]);
    const logs = [step('a', 1000, 1000), step('b', 1000, 3000), step('c', 3000, 4000), ...items];
    const done = { status: 'completed' as const, finished_at: at(4000) };
    const map = runTimeline(run(logs, done), graph, [], T0).rows[2]!;
    expect(map).toMatchObject({ items: 3 });
    // Each item a row of its own, from its first step's start to its last step's end.
    expect(map.children!.map((item) => [item.id, item.status, ...kinds(item.segments).flat()])).toEqual([
      ['c[0]', 'completed', 'running', 3000, 4000],
      ['c[1]', 'completed', 'running', 3000, 4000],
      ['c[2]', 'completed', 'running', 3000, 4000],
    ]);
    const many = [...Array(25).keys()].map((i) => step(`c[${i}].x`, 3000, 3000 + i));
    const wide = runTimeline(run([...logs.slice(0, 3), ...many], done), graph, [], T0).rows[2]!;
    expect(wide.items).toBe(25);
    expect(wide.children).toHaveLength(ITEM_ROWS_MAX);
    const drawn = String(
      timelineSection(runTimeline(run([...logs.slice(0, 3), ...many], done), graph, [], T0), 'run_1'),
    );
    expect(drawn).toContain('data-timeline-row="c[19]"');
    expect(drawn).not.toContain('data-timeline-row="c[20]"');
    expect(drawn).toContain('and 5 more items');
    expect(drawn).toContain('data-timeline-times="c[19]"');
    expect(runTimeline(run(logs, { ...done, logs_truncated: true }), graph, [], T0).rows[2]).toMatchObject({
      items: 3,
      itemsCut: true,
    });
  });

  it("draws an agent's tool calls and a called workflow's nodes as rows under their node", () => {
    const nodes = [
      { id: 'ask', type: 'agent', config: {} },
      { id: 'sub', type: 'workflow', config: {} },
    ] as unknown as GraphSnapshot['nodes'];
    const logs = [
      step('ask', 1000, 5000),
      step('ask[0].search', 1500, 2500, { node_type: 'http_request' }),
      step('ask[1].search', 3000, 4500, { node_type: 'http_request' }),
      step('sub', 5000, 8000, { node_type: 'workflow' }),
      step('sub.classify', 5000, 7000),
      step('sub.reply', 7000, 8000, { node_type: 'template' }),
      step('sub.fan[0].x', 7000, 7500), // a level deeper: part of sub.fan's row, none of its own here
    ];
    const t = runTimeline(
      run(logs, { status: 'completed', finished_at: at(8000) }),
      { version: 1, nodes, edges: [] },
      [],
      T0,
    );
    const [ask, sub] = t.rows;
    expect(ask!.children!.map((c) => [c.id, c.type, ...kinds(c.segments).flat()])).toEqual([
      ['ask[0]', 'call', 'running', 1500, 2500],
      ['ask[1]', 'call', 'running', 3000, 4500],
    ]);
    expect(sub!.children!.map((c) => [c.id, c.type, c.child, ...kinds(c.segments).flat()])).toEqual([
      ['sub.classify', 'llm_call', true, 'running', 5000, 7000],
      ['sub.reply', 'template', true, 'running', 7000, 8000],
    ]);
    const drawn = String(timelineSection(t, 'run_1'));
    expect(drawn).toContain('<small>agent · 2 calls</small>');
    expect(drawn).toMatch(
      /data-timeline-row="ask\[1\]"><span class="tl-name"><code>ask\[1\]<\/code> <small>tool call<\/small>/,
    );
    expect(drawn).toMatch(
      /data-timeline-row="sub\.reply"><span class="tl-name"><code>sub\.reply<\/code> <small>template<\/small>/,
    );
  });
});
