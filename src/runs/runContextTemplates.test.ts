// Templates read `run` and `workflow`: the run the user sees and the workflow whose graph the
// node belongs to (a called workflow's own; a map body's enclosing one), through a real HTTP
// server, store and queue. Other fields under `run.` or `workflow.` are a 422 at save.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsUser } from '../../test/support/workflowUsers.ts';
import { createRunner } from './runner.ts';
import { runsStore } from './runsStore.ts';
import { newRunId } from './service.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

const ALL_FOUR = '{{ run.id }}|{{ run.created_at }}|{{ workflow.id }}|{{ workflow.version }}';

async function save(client: ApiClient, name: string, nodes: Node[], edges: Edge[]) {
  const { data, error, response } = await client.POST('/api/workflows', { body: { name, nodes, edges } });
  return { id: data?.data.id ?? '', version: data?.data.version ?? 0, error, status: response.status };
}

async function runToEnd(client: ApiClient, workflowId: string, inputs: Record<string, string>) {
  const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
    body: { inputs },
  });
  if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
  return data.data;
}

/** One input, a template over it and all four context values, its text out. */
const echoing = (template: string): [Node[], Edge[]] => [
  [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'show', type: 'template', config: { template } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  [
    { from: 'in', to: 'show' },
    { from: 'show', to: 'out' },
  ],
];

describe.each(testDialects())('run and workflow in templates on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let aliceId: number;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    ({ client: alice, userId: aliceId } = await workflowsUser(server.ctx, server.baseUrl, 'alice'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('renders run.id, run.created_at, workflow.id and workflow.version as the run says them', async () => {
    const workflow = await save(alice, 'context', ...echoing(`${ALL_FOUR}|{{ inputs.ticket }}`));
    expect(workflow.status).toBe(201);
    // A second version, so the version read is the run's, not a constant.
    const [nodes, edges] = echoing(`${ALL_FOUR}|v2`);
    const patched = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: workflow.id } },
      body: { nodes, edges },
    });
    expect(patched.response.status).toBe(200);
    const run = await runToEnd(alice, workflow.id, { ticket: 't' });
    expect(run.status).toBe('completed');
    expect(run.workflow_version).toBe(2);
    expect(run.output).toEqual({
      out: `${run.id}|${run.created_at}|${workflow.id}|${run.workflow_version}|v2`,
    });
  });

  it('inside a called workflow: run is the top-level run, workflow the callee; a map body reads the enclosing workflow', async () => {
    const callee = await save(alice, 'callee', ...echoing(ALL_FOUR));
    expect(callee.status).toBe(201);
    const caller = await save(
      alice,
      'caller',
      [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'call', type: 'workflow', config: { workflow_id: callee.id, inputs: { ticket: '{{ workflow.id }}' } } },
        { id: 'parts', type: 'split', config: { by: 'separator', separator: ';' } },
        {
          id: 'each',
          type: 'map',
          config: {
            body: {
              nodes: [
                { id: 'item', type: 'text_input', config: { variable: 'item' } },
                { id: 'shape', type: 'template', config: { template: `{{ inputs.item }}:${ALL_FOUR}` } },
                { id: 'out', type: 'text_output', config: { format: 'plain' } },
              ],
              edges: [
                { from: 'item', to: 'shape' },
                { from: 'shape', to: 'out' },
              ],
            },
          },
        },
        { id: 'byCall', type: 'map', config: { workflow_id: callee.id, item_variable: 'ticket' } },
        { id: 'called', type: 'text_output', config: { format: 'plain' } },
        { id: 'mapped', type: 'text_output', config: { format: 'json' } },
        { id: 'mappedCall', type: 'text_output', config: { format: 'json' } },
      ],
      [
        { from: 'doc', to: 'call' },
        { from: 'doc', to: 'parts' },
        { from: 'parts', to: 'each' },
        { from: 'parts', to: 'byCall' },
        { from: 'call', to: 'called' },
        { from: 'each', to: 'mapped' },
        { from: 'byCall', to: 'mappedCall' },
      ],
    );
    expect(caller.status).toBe(201);
    const run = await runToEnd(alice, caller.id, { doc: 'a;b' });
    expect(run.status).toBe('completed');
    const calleeSays = `${run.id}|${run.created_at}|${callee.id}|${callee.version}`;
    const callerSays = `${run.id}|${run.created_at}|${caller.id}|${run.workflow_version}`;
    expect(run.output).toEqual({
      called: calleeSays,
      // One output per graph: each item's result is that output's value.
      mapped: [`a:${callerSays}`, `b:${callerSays}`],
      mappedCall: [calleeSays, calleeSays],
    });
  });

  it("a run taken over renders the stored run's values, not the clock's or the live workflow's", async () => {
    const workflow = await save(alice, 'takeover', ...echoing(ALL_FOUR));
    const [nodes, edges] = echoing(ALL_FOUR);
    const id = newRunId();
    const createdAt = Date.parse('2026-01-02T03:04:05.678Z');
    // A run an earlier worker claimed (attempts 1) and lost, its snapshot at a version of its own.
    await runsStore(server.ctx.db).start({
      id,
      workflow_id: workflow.id,
      user_id: aliceId,
      status: 'running',
      inputs: JSON.stringify({ ticket: 't' }),
      graph: JSON.stringify({ version: 7, nodes, edges }),
      output: null,
      error: null,
      usage: null,
      idempotency_key: null,
      attempts: 1,
      created_at: createdAt,
      started_at: createdAt,
      finished_at: null,
      duration_ms: null,
    });
    const runner = createRunner(server.ctx, server.ctx.runs!.models);
    await runner.handle(id, { retryCount: 1, lastAttempt: false, signal: new AbortController().signal });
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflow.id, run_id: id } },
    });
    expect(data!.data).toMatchObject({
      status: 'completed',
      created_at: '2026-01-02T03:04:05.678Z',
      workflow_version: 7,
      output: { out: `${id}|2026-01-02T03:04:05.678Z|${workflow.id}|7` },
    });
  });

  it.each([
    ['run.nope', '"run.nope": run offers only run.id, run.created_at'],
    ['workflow.nope', '"workflow.nope": workflow offers only workflow.id, workflow.version'],
    ['run.id.size', '"run.id.size": run.id is a string, with no field "size"'],
    ['run', '"run": run offers only run.id, run.created_at'],
  ])('refuses %s at save with a 422 naming it', async (reference, message) => {
    const saved = await save(alice, 'bad', ...echoing(`{{ ${reference} }}`));
    expect(saved.status).toBe(422);
    expect(saved.error).toMatchObject({ errors: [{ pointer: '/nodes/1/config/template', message }] });
  });
});
