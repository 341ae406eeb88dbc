// Budgets, not per-render limits, through a real HTTP server, store and queue with an
// in-process worker: the audit's crash and starvation workflows end as failed runs with a clear
// error, this process (the API and the worker) lives, and another user's runs complete while the
// heavy ones run. PostgreSQL only: what is proved is the executor's budgets, not the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type RunDetail = Schemas['RunDetail'];
type Graph = Required<Pick<Schemas['WorkflowCreate'], 'nodes' | 'edges'>>;

const RANGE_BOMB = '{% for i in (1..9999999) %}{% endfor %}'; // grew the API to 4.35 GB, 45 at once
const CAPTURE_DOUBLING =
  '{% assign s = "x" %}{% for i in (1..28) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}{{ s }}';
/** Tens of ms of rendering: far under every per-call limit, so only a run's budgets stop a chain of them. */
const BUSY = '{% for i in (1..100000) %}{% endfor %}';

const clientFor = (ctx: AppContext, login: string) => workflowsClient(ctx, ctx.config.BASE_URL, login);

/** text_input `text` -> each of `templates` (in parallel, or a chain) -> text_output. */
function graphOf(templates: string[], shape: 'parallel' | 'chain' = 'parallel'): Graph {
  const ids = templates.map((_, i) => `t${i + 1}`);
  const nodes: Graph['nodes'] = [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    ...templates.map((template, i) => ({ id: ids[i]!, type: 'template' as const, config: { template } })),
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ];
  const edges =
    shape === 'parallel'
      ? ids.flatMap((id) => [
          { from: 'in', to: id },
          { from: id, to: 'out' },
        ])
      : ['in', ...ids, 'out'].slice(1).map((to, i) => ({ from: i === 0 ? 'in' : ids[i - 1]!, to }));
  return { nodes, edges };
}

async function createWorkflow(client: ApiClient, graph: Graph): Promise<string> {
  const { data, error } = await client.POST('/api/workflows', { body: { name: 'budgets', ...graph } });
  if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
  return data.data.id;
}

async function startRun(client: ApiClient, workflowId: string, text: string, wait?: number): Promise<RunDetail> {
  const { data, error, response } = await client.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: workflowId }, ...(wait ? { header: { Prefer: `wait=${wait}` } } : {}) },
    body: { inputs: { text } },
  });
  if (!data) throw new Error(`run failed: ${response.status} ${JSON.stringify(error)}`);
  return data.data;
}

async function getRun(client: ApiClient, workflowId: string, runId: string): Promise<RunDetail> {
  const { data } = await client.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
    params: { path: { workflow_id: workflowId, run_id: runId } },
  });
  return data!.data;
}

const ended = (run: RunDetail) => ['completed', 'failed', 'cancelled'].includes(run.status);

async function runToEnd(client: ApiClient, graph: Graph, text = 'hi'): Promise<RunDetail> {
  const workflowId = await createWorkflow(client, graph);
  let run = await startRun(client, workflowId, text, 60);
  while (!ended(run)) run = await getRun(client, workflowId, run.id);
  return run;
}

describe('run budgets', () => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({
      runs: true,
      // Two compute processes, so a user's share is one of them; a run may compute for 1.5 s and last 8 s.
      env: { COMPUTE_PROCESSES: '2', RUN_COMPUTE_MAX_MS: '1500', RUN_TIMEOUT_SECONDS: '8' },
    });
    alice = await clientFor(server.ctx, 'alice');
    bob = await clientFor(server.ctx, 'bob');
  });
  afterAll(async () => {
    await server?.close();
  });

  it("the audit's crash workflow (45 parallel range loops) fails with compute_limit at a template node; the process lives", async () => {
    const run = await runToEnd(alice, graphOf(Array.from({ length: 45 }, () => RANGE_BOMB)));
    expect(run).toMatchObject({
      status: 'failed',
      error: { code: 'compute_limit', node_id: expect.stringMatching(/^t\d+$/) },
    });
    // Out of its heap, or past this server's small run budget first (the heap's limit alone: pool.unit.test.ts).
    expect(run.error!.message).toMatch(/COMPUTE_HEAP_MB|RUN_COMPUTE_MAX_MS/);
    expect(run.logs.find((s) => s.node_id === run.error!.node_id)).toMatchObject({
      status: 'failed',
      error: { code: 'compute_limit' },
    });
    // Still answering, and runs still run.
    expect((await bob.GET('/api/workflows')).response.status).toBe(200);
    expect(await runToEnd(bob, graphOf(['Hello {{ inputs.text }}']), 'Bob')).toMatchObject({
      status: 'completed',
      output: { out: 'Hello Bob' },
    });
  });

  it('a capture doubled 28 times fails with output_too_large at its node (NODE_TEXT_MAX_CHARS)', async () => {
    const run = await runToEnd(alice, graphOf([CAPTURE_DOUBLING]));
    expect(run).toMatchObject({ status: 'failed', error: { code: 'output_too_large', node_id: 't1' } });
    expect(run.error!.message).toMatch(/NODE_TEXT_MAX_CHARS/);
  });

  it('a long chain of busy templates fails with compute_limit once its computations pass RUN_COMPUTE_MAX_MS', async () => {
    const run = await runToEnd(
      alice,
      graphOf(
        Array.from({ length: 98 }, () => BUSY),
        'chain',
      ),
    );
    expect(run).toMatchObject({ status: 'failed', error: { code: 'compute_limit' } });
    expect(run.error!.message).toMatch(/RUN_COMPUTE_MAX_MS/);
    expect(run.logs.filter((s) => s.status === 'completed').length).toBeLessThan(99);
  });

  it("starvation: while one user's 10 heavy chains run, another user's template and one-node runs complete; the chains then fail", async () => {
    const lightGraph = graphOf(['Hi {{ inputs.text }}']);
    const oneNode: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'text' } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [{ from: 'in', to: 'out' }],
    };
    // Idle first, both users at once: both compute processes are up (a cold start is not the load's doing).
    await Promise.all([runToEnd(alice, lightGraph), runToEnd(bob, lightGraph)]);

    const heavy = await createWorkflow(
      alice,
      graphOf(
        Array.from({ length: 98 }, () => BUSY),
        'chain',
      ),
    );
    const heavyRuns = await Promise.all(Array.from({ length: 10 }, () => startRun(alice, heavy, 'load')));
    const light = await runToEnd(bob, lightGraph, 'Bob');
    const plain = await runToEnd(bob, oneNode, 'one');
    const list = await bob.GET('/api/workflows');
    // Counted when Bob's runs are done: every heavy run is still going (Alice's ten chains take
    // turns on her one compute process, so none spends its 1.5 s before the 8 s wall clock).
    const meanwhile = await Promise.all(heavyRuns.map((r) => getRun(alice, heavy, r.id)));
    expect(light).toMatchObject({ status: 'completed', output: { out: 'Hi Bob' } });
    expect(plain).toMatchObject({ status: 'completed', output: { out: 'one' } });
    expect(list.response.status).toBe(200);
    expect(meanwhile.filter(ended)).toHaveLength(0);

    const finals = await Promise.all(
      heavyRuns.map(async (r) => {
        let run = await getRun(alice, heavy, r.id);
        while (!ended(run)) run = (await new Promise((res) => setTimeout(res, 100)), await getRun(alice, heavy, r.id));
        return run;
      }),
    );
    // Each ends failed by a budget of its run: its compute time, or its wall clock.
    for (const run of finals)
      expect(run).toMatchObject({
        status: 'failed',
        error: { code: expect.stringMatching(/^(compute_limit|timeout)$/) },
      });
  });
});

describe('size caps and the wall clock', () => {
  let server: TestServer;
  let carol: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({
      runs: true,
      env: {
        COMPUTE_PROCESSES: '2',
        NODE_TEXT_MAX_CHARS: '1000',
        RUN_OUTPUT_MAX_CHARS: '1500',
        RUN_TIMEOUT_SECONDS: '1',
      },
    });
    carol = await clientFor(server.ctx, 'carol');
  });
  afterAll(async () => {
    await server?.close();
  });

  it("a node's text past NODE_TEXT_MAX_CHARS fails that node with output_too_large, whichever node makes it", async () => {
    const text = 'x'.repeat(600);
    const doubled = await runToEnd(carol, graphOf(['{{ inputs.text }}{{ inputs.text }}']), text);
    expect(doubled).toMatchObject({ status: 'failed', error: { code: 'output_too_large', node_id: 't1' } });
    // A text_output joining two texts under the cap makes one over it.
    const joined = await runToEnd(carol, graphOf(['{{ inputs.text }}', '{{ inputs.text }}']), text);
    expect(joined).toMatchObject({ status: 'failed', error: { code: 'output_too_large', node_id: 'out' } });
    expect(joined.error!.message).toMatch(/NODE_TEXT_MAX_CHARS/);
  });

  it('an output past RUN_OUTPUT_MAX_CHARS fails the run with output_too_large at the text_output that passed it (each under the node cap)', async () => {
    const graph: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'text' } },
        { id: 'a', type: 'text_output', config: { format: 'plain' } },
        { id: 'b', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'a' },
        { from: 'in', to: 'b' },
      ],
    };
    const run = await runToEnd(carol, graph, 'y'.repeat(800));
    expect(run).toMatchObject({
      status: 'failed',
      error: { code: 'output_too_large', node_id: expect.stringMatching(/^[ab]$/) },
    });
    expect(run.error!.message).toMatch(/RUN_OUTPUT_MAX_CHARS/);
    expect(run.output).toBeNull();
  });

  it('RUN_TIMEOUT_SECONDS fires while a computation runs: the run fails with timeout', async () => {
    const run = await runToEnd(
      carol,
      graphOf(
        Array.from({ length: 98 }, () => BUSY),
        'chain',
      ),
    );
    expect(run).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    expect(run.logs.find((s) => s.node_id === run.error!.node_id)?.status).toBe('cancelled');
  });
});
