// Workflows that call workflows, through a real HTTP server, store and
// queue: a `workflow` node runs another workflow of the same user within the run (its steps
// `<node>.<its node>`), a `map` runs one per item; a cycle or another user's workflow is a 422 at
// save, and a called workflow gone by run time fails the node with workflow_not_found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

async function save(client: ApiClient, name: string, nodes: Node[], edges: Edge[]) {
  const { data, error, response } = await client.POST('/api/workflows', { body: { name, nodes, edges } });
  return { id: data?.data.id ?? '', error, status: response.status };
}

async function runToEnd(client: ApiClient, workflowId: string, inputs: Record<string, string>) {
  const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
    body: { inputs },
  });
  if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
  return data.data;
}

/** A workflow of one input `ticket`, echoed with a frame by a template. */
const framing: [Node[], Edge[]] = [
  [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'frame', type: 'template', config: { template: '<{{ inputs.ticket }}>' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  [
    { from: 'in', to: 'frame' },
    { from: 'frame', to: 'out' },
  ],
];

describe.each(testDialects())('workflow and map nodes calling workflows on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
    bob = await workflowsClient(server.ctx, server.baseUrl, 'bob');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a workflow node runs the called workflow with its mapped inputs; its steps are <node>.<its node>', async () => {
    const callee = await save(alice, 'frame', ...framing);
    const caller = await save(
      alice,
      'caller',
      [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        {
          id: 'call',
          type: 'workflow',
          config: { workflow_id: callee.id, inputs: { ticket: '{{ inputs.doc | upcase }}' } },
        },
        { id: 'result', type: 'text_output', config: { format: 'plain' } },
      ],
      [
        { from: 'doc', to: 'call' },
        { from: 'call', to: 'result' },
      ],
    );
    expect(caller.status).toBe(201);
    const run = await runToEnd(alice, caller.id, { doc: 'export fails' });
    expect(run).toMatchObject({ status: 'completed', output: { result: '<EXPORT FAILS>' } });
    expect(run.logs.map((s) => [s.node_id, s.node_type, s.status])).toEqual([
      ['doc', 'text_input', 'completed'],
      ['call', 'workflow', 'completed'],
      ['call.in', 'text_input', 'completed'],
      ['call.frame', 'template', 'completed'],
      ['call.out', 'text_output', 'completed'],
      ['result', 'text_output', 'completed'],
    ]);
    expect(run.logs[1]).toMatchObject({ input: '{"ticket":"EXPORT FAILS"}', output: '<EXPORT FAILS>' });
  });

  it('a map with workflow_id runs that workflow once per item, the item as its item_variable input', async () => {
    const callee = await save(alice, 'frame each', ...framing);
    const mapper = await save(
      alice,
      'mapper',
      [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'parts', type: 'split', config: { by: 'separator', separator: ';' } },
        { id: 'each', type: 'map', config: { workflow_id: callee.id, item_variable: 'ticket', concurrency: 2 } },
        { id: 'result', type: 'text_output', config: { format: 'json' } },
      ],
      [
        { from: 'doc', to: 'parts' },
        { from: 'parts', to: 'each' },
        { from: 'each', to: 'result' },
      ],
    );
    const run = await runToEnd(alice, mapper.id, { doc: 'a;b;c' });
    expect(run).toMatchObject({ status: 'completed', output: { result: ['<a>', '<b>', '<c>'] } });
    expect(
      run.logs
        .filter((s) => s.node_id.endsWith('.frame'))
        .map((s) => s.node_id)
        .sort(),
    ).toEqual(['each[0].frame', 'each[1].frame', 'each[2].frame']);
  });

  it('refuses at save a call that closes a cycle (422 naming the chain), a call of itself, and a workflow of another user', async () => {
    const a = await save(alice, 'a', ...framing);
    const b = await save(
      alice,
      'b',
      [
        { id: 'in', type: 'text_input', config: { variable: 'x' } },
        { id: 'call', type: 'workflow', config: { workflow_id: a.id } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      [
        { from: 'in', to: 'call' },
        { from: 'call', to: 'out' },
      ],
    );
    expect(b.status).toBe(201);
    // a now calls b, which calls a.
    const closing = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: a.id } },
      body: {
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          { id: 'back', type: 'workflow', config: { workflow_id: b.id } },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'in', to: 'back' },
          { from: 'back', to: 'out' },
        ],
      },
    });
    expect(closing.response.status).toBe(422);
    expect(closing.error).toMatchObject({
      errors: [{ pointer: '/nodes/1/config/workflow_id', message: `makes a cycle: ${a.id} -> ${b.id} -> ${a.id}` }],
    });
    const itself = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: a.id } },
      body: {
        nodes: [...framing[0], { id: 'me', type: 'workflow', config: { workflow_id: a.id } }],
        edges: framing[1],
      },
    });
    expect(itself.error).toMatchObject({
      errors: [{ pointer: '/nodes/3/config/workflow_id', message: 'calls the workflow it belongs to: a cycle' }],
    });
    const stolen = await save(
      bob,
      'not mine',
      [
        { id: 'call', type: 'workflow', config: { workflow_id: a.id } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      [{ from: 'call', to: 'out' }],
    );
    expect(stolen.status).toBe(422);
    expect(stolen.error).toMatchObject({
      errors: [{ pointer: '/nodes/0/config/workflow_id', message: `no workflow "${a.id}" of yours` }],
    });
  });

  it('a called workflow deleted after the save fails the node at run time with workflow_not_found', async () => {
    const callee = await save(alice, 'short-lived', ...framing);
    const caller = await save(
      alice,
      'orphan',
      [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'call', type: 'workflow', config: { workflow_id: callee.id } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      [
        { from: 'doc', to: 'call' },
        { from: 'call', to: 'out' },
      ],
    );
    await alice.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: callee.id } } });
    const run = await runToEnd(alice, caller.id, { doc: 'x' });
    expect(run).toMatchObject({ status: 'failed', error: { code: 'workflow_not_found', node_id: 'call' } });
  });

  it('a workflow node pinned to a version runs that version whatever the callee became; unpinned, its current one; a missing version is a 422', async () => {
    const callee = await save(alice, 'evolving', ...framing);
    const [nodes, edges] = framing;
    const v2 = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: callee.id } },
      body: {
        nodes: nodes.map((n) =>
          n.id === 'frame' ? { ...n, config: { template: '[{{ inputs.ticket }}]' } } : n,
        ) as Node[],
        edges,
      },
    });
    expect(v2.data?.data.version).toBe(2);
    const caller = (version?: number) =>
      save(
        alice,
        `caller of v${version ?? 'current'}`,
        [
          { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
          {
            id: 'call',
            type: 'workflow',
            config: { workflow_id: callee.id, ...(version !== undefined && { version }) },
          },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ],
        [
          { from: 'doc', to: 'call' },
          { from: 'call', to: 'out' },
        ],
      );
    const pinned = await caller(1);
    expect((await runToEnd(alice, pinned.id, { doc: 'x' })).output).toEqual({ out: '<x>' });
    const current = await caller();
    expect((await runToEnd(alice, current.id, { doc: 'x' })).output).toEqual({ out: '[x]' });
    const missing = await caller(9);
    expect(missing.status).toBe(422);
    expect(missing.error).toMatchObject({
      errors: [
        { pointer: '/nodes/1/config/workflow_id', message: `no version 9 of a workflow "${callee.id}" of yours` },
      ],
    });
  });
});
