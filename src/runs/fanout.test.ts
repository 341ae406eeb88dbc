// Bounded fan-out, through a real HTTP server, store and queue: nested maps whose max_items may
// pass RUN_MAX_ITEMS are a 422 at save; a run past RUN_MAX_STEPS, RUN_MAX_ITEMS or RUN_MAX_EVENTS
// fails with too_many_steps, too_many_items or too_many_events; a wide map stores a few event rows
// (its items' steps send none: `node.progress` counts them), not some per item.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

/** A map body: the item through a template to the output (`steps` 2 or 3 nodes). */
function body(steps: 2 | 3 = 3, inner?: Record<string, unknown>): { nodes: Node[]; edges: Edge[] } {
  const nodes: Node[] = [
    { id: 'item', type: 'text_input', config: { variable: 'item' } },
    ...(inner ? [{ id: 'inner', type: 'map', config: { body: body(2), ...inner } } as Node] : []),
    ...(steps === 3 && !inner
      ? [{ id: 'shape', type: 'template', config: { template: '<{{ inputs.item }}>' } } as Node]
      : []),
    { id: 'out', type: 'text_output', config: { format: 'json' } },
  ];
  return { nodes, edges: nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id })) };
}

/** list (a JSON list) -> one map per entry of `maps` (side by side) -> output. */
function mapping(...maps: Record<string, unknown>[]): { nodes: Node[]; edges: Edge[] } {
  const ids = maps.map((_, i) => `each${i}`);
  return {
    nodes: [
      { id: 'list', type: 'text_input', config: { variable: 'list', type: 'array' } } as Node,
      ...maps.map((m, i) => ({ id: ids[i]!, type: 'map', config: { body: body(), concurrency: 1, ...m } }) as Node),
      { id: 'result', type: 'text_output', config: { format: 'json' } },
    ],
    edges: [...ids.map((id) => ({ from: 'list', to: id })), ...ids.map((id) => ({ from: id, to: 'result' }))],
  };
}

const list = (n: number) => Array.from({ length: n }, (_, i) => i);

describe.each(testDialects())('bounded fan-out on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      runs: true,
      env: { RUN_MAX_STEPS: '500', RUN_MAX_ITEMS: '300', RUN_MAX_EVENTS: '100' },
    });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'fanout-alice');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function save(graph: { nodes: Node[]; edges: Edge[] }) {
    const { data, error, response } = await alice.POST('/api/workflows', { body: { name: 'fan-out', ...graph } });
    return { id: data?.data.id ?? '', error, status: response.status };
  }
  async function runToEnd(workflowId: string, inputs: Record<string, unknown>) {
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=60' } },
      body: { inputs: inputs as Record<string, string> },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    return data.data;
  }
  const eventRows = async (runId: string) => {
    const rows = (await server.ctx.db('run_events').where({ run_id: runId }).select('type', 'data').orderBy('seq')) as {
      type: string;
      data: string;
    }[];
    return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) as Record<string, unknown> }));
  };

  it('refuses at save nested maps whose max_items may take more than RUN_MAX_ITEMS, pointing at the inner max_items', async () => {
    // 20 outer items, each running a map of 20: 20 + 400 items > 300.
    const refused = await save(mapping({ max_items: 20, body: body(3, { max_items: 20 }) }));
    expect(refused.status).toBe(422);
    expect(refused.error).toMatchObject({
      code: 'invalid_workflow',
      errors: [
        { pointer: '/nodes/1/config/body/nodes/1/config/max_items', message: expect.stringContaining('RUN_MAX_ITEMS') },
      ],
    });
    // A single map past it too; 20 + 20 x 14 = 300 is within it.
    expect((await save(mapping({ max_items: 301 }))).error).toMatchObject({
      errors: [{ pointer: '/nodes/1/config/max_items' }],
    });
    expect((await save(mapping({ max_items: 20, body: body(3, { max_items: 14 }) }))).status).toBe(201);
  });

  it('fails a run past RUN_MAX_STEPS with too_many_steps', async () => {
    const wf = await save(mapping({ max_items: 200, concurrency: 4 }));
    expect(wf.status).toBe(201);
    const run = await runToEnd(wf.id, { list: list(200) }); // 3 + 200 x 3 steps > 500
    expect(run).toMatchObject({
      status: 'failed',
      error: { code: 'too_many_steps', node_id: 'each0', message: expect.stringContaining('RUN_MAX_STEPS') },
    });
  });

  it('fails a run whose maps together pass RUN_MAX_ITEMS with too_many_items', async () => {
    // Each map's 200 items are within the cap (as the save checked); the two together are not.
    const wf = await save(mapping({ max_items: 200 }, { max_items: 200 }));
    expect(wf.status).toBe(201);
    const run = await runToEnd(wf.id, { list: list(200) });
    expect(run).toMatchObject({
      status: 'failed',
      error: { code: 'too_many_items', message: expect.stringContaining('RUN_MAX_ITEMS') },
    });
  });

  it('fails a run past RUN_MAX_EVENTS with too_many_events, storing no more than that and its end', async () => {
    const frames = Array.from({ length: 60 }, (_, i): Node => ({
      id: `t${i}`,
      type: 'template',
      config: { template: `{{ inputs.x }} ${i}` },
    }));
    const wf = await save({
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'x' } },
        ...frames,
        { id: 'out', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [...frames.map((f) => ({ from: 'in', to: f.id })), ...frames.map((f) => ({ from: f.id, to: 'out' }))],
    });
    expect(wf.status).toBe(201);
    const run = await runToEnd(wf.id, { x: 'a' }); // 1 + 62 x 2 events > 100
    expect(run).toMatchObject({
      status: 'failed',
      error: { code: 'too_many_events', message: expect.stringContaining('RUN_MAX_EVENTS') },
    });
    const events = await eventRows(run.id);
    expect(events.length).toBeLessThanOrEqual(100 + 2);
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', data: { status: 'failed' } });
  });

  it('a wide map stores a few event rows: its items send none, node.progress counts them', async () => {
    const wf = await save(mapping({ max_items: 240, concurrency: 8, body: body(2) }));
    const run = await runToEnd(wf.id, { list: list(240) }); // 240 items x 2 steps: 480 log rows, had been 960 events
    expect(run).toMatchObject({ status: 'completed' });
    const events = await eventRows(run.id);
    expect(events.length).toBeLessThan(30);
    expect(events.some((e) => String(e.data.node_id).includes('['))).toBe(false);
    const progress = events.filter((e) => e.type === 'node.progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThanOrEqual(11);
    expect(progress[0]!.data).toEqual({ node_id: 'each0', node_type: 'map', total: 240, done: 0, failed: 0 });
    expect(progress.at(-1)!.data).toEqual({ node_id: 'each0', node_type: 'map', total: 240, done: 240, failed: 0 });
    // The items' steps are in the run's log all the same.
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: wf.id, run_id: run.id } },
    });
    expect(data?.data.logs?.filter((s) => s.node_id.startsWith('each0[')).length).toBe(480);
  });
});
