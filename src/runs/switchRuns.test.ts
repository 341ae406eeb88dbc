// The switch node through runs, on a real HTTP server, store (PostgreSQL;
// MariaDB too with TEST_MYSQL_URL) and queue, with a local OpenAI-compatible provider: classify,
// then route on a field of the model's JSON down the chosen case; the chosen edge passes the
// upstream value, the cases not chosen are skipped; a pattern that backtracks without end is cut
// by the compute pool's time limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { executeGraph } from './executor.ts';
import { createModelRouter } from './providers/index.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

async function apiKeyFor(ctx: AppContext, login: string): Promise<string> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'runs',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return token;
}

const ticket = {
  type: 'object',
  required: ['category', 'amount'],
  properties: { category: { type: 'string' }, amount: { type: 'number' } },
};
const classifyAndRoute: { nodes: Node[]; edges: Edge[] } = {
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    {
      id: 'classify',
      type: 'llm_call',
      config: {
        model: 'llama-3',
        response_format: { type: 'json_schema', json_schema: { name: 'ticket', schema: ticket } },
      },
    },
    {
      id: 'route',
      type: 'switch',
      config: {
        value: 'nodes.classify.output.category',
        cases: [
          { name: 'billing', operator: '==', value: 'billing' },
          { name: 'tech', operator: 'in', value: ['bug', 'outage'] },
        ],
      },
    },
    { id: 'refund', type: 'template', config: { template: 'Refund {{ nodes.route.output.amount }}' } },
    { id: 'page', type: 'template', config: { template: 'Page on-call' } },
    { id: 'queue', type: 'template', config: { template: 'Queued {{ nodes.route.output | json }}' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'classify' },
    { from: 'classify', to: 'route' },
    { from: 'route', to: 'refund', case: 'billing' },
    { from: 'route', to: 'page', case: 'tech' },
    { from: 'route', to: 'queue', case: 'default' },
    { from: 'refund', to: 'result' },
    { from: 'page', to: 'result' },
    { from: 'queue', to: 'result' },
  ],
};

describe.each(testDialects())('switch nodes in runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3', COMPUTE_TIME_LIMIT_MS: '500' },
    });
    alice = createApiClient(server.baseUrl, { bearer: await apiKeyFor(server.ctx, 'alice') });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function create(graph: { nodes: Node[]; edges: Edge[] }): Promise<string> {
    const { data, error } = await alice.POST('/api/workflows', { body: { name: 'switch', ...graph } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  async function run(workflowId: string, inputs: Record<string, string>) {
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
      body: { inputs },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    return data.data;
  }
  const statuses = (logs: Schemas['RunStep'][]) => Object.fromEntries(logs.map((s) => [s.node_id, s.status]));

  it('follows the chosen case with the upstream value (not the verdict); the other cases are skipped', async () => {
    const workflowId = await create(classifyAndRoute);
    fake.replies = [{ kind: 'completion', content: '{"category": "billing", "amount": 42}' }];
    const billing = await run(workflowId, { ticket: 'Charged twice' });
    expect(billing).toMatchObject({ status: 'completed', output: { result: 'Refund 42' } });
    expect(statuses(billing.logs)).toMatchObject({
      route: 'completed',
      refund: 'completed',
      page: 'skipped',
      queue: 'skipped',
      result: 'completed',
    });
    expect(billing.logs.find((s) => s.node_id === 'route')).toMatchObject({
      output_value: { category: 'billing', amount: 42 },
    });

    fake.replies = [{ kind: 'completion', content: '{"category": "outage", "amount": 0}' }];
    expect(statuses((await run(workflowId, { ticket: 'Site down' })).logs)).toMatchObject({
      refund: 'skipped',
      page: 'completed',
      queue: 'skipped',
    });

    fake.replies = [{ kind: 'completion', content: '{"category": "other", "amount": 1}' }];
    const other = await run(workflowId, { ticket: 'Hello' });
    expect(other).toMatchObject({ status: 'completed', output: { result: 'Queued {"category":"other","amount":1}' } });
    expect(statuses(other.logs)).toMatchObject({ refund: 'skipped', page: 'skipped', queue: 'completed' });
  });

  const eventsOf = async (workflowId: string, runId: string) => {
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}/event-log', {
      params: { path: { workflow_id: workflowId, run_id: runId } },
    });
    return data!.data;
  };
  const finishedOf = (events: { event: string; data: Record<string, unknown> }[], nodeId: string) =>
    events.filter((e) => e.event === 'node.finished' && e.data.node_id === nodeId).map((e) => e.data);

  it('stores the chosen case on the switch step and its node.finished event, and a retry keeps it', async () => {
    const workflowId = await create({
      nodes: [
        ...classifyAndRoute.nodes.slice(0, 3),
        {
          id: 'refund',
          type: 'llm_call',
          config: { model: 'llama-3', prompt: 'Refund {{ nodes.route.output.amount }}' },
        },
        ...classifyAndRoute.nodes.slice(4),
      ],
      edges: classifyAndRoute.edges,
    });
    fake.replies = [
      { kind: 'completion', content: '{"category": "billing", "amount": 42}' },
      { kind: 'error', status: 400, message: 'Refused.' },
    ];
    const failed = await run(workflowId, { ticket: 'Charged twice' });
    expect(failed).toMatchObject({ status: 'failed', error: { node_id: 'refund' } });
    const route = (logs: Schemas['RunStep'][]) => logs.find((s) => s.node_id === 'route');
    expect(route(failed.logs)).toMatchObject({ status: 'completed', case: 'billing' });
    // Only the switch says a case: no other step carries one.
    expect(failed.logs.filter((s) => s.case !== undefined).map((s) => s.node_id)).toEqual(['route']);
    expect(finishedOf(await eventsOf(workflowId, failed.id), 'route')).toMatchObject([{ case: 'billing' }]);
    expect(finishedOf(await eventsOf(workflowId, failed.id), 'classify')[0]).not.toHaveProperty('case');

    fake.replies = [{ kind: 'completion', content: 'Refunded' }];
    const { data } = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/retry', {
      params: { path: { workflow_id: workflowId, run_id: failed.id }, header: { Prefer: 'wait=20' } },
      body: {},
    });
    const retried = data!.data;
    expect(retried).toMatchObject({ status: 'completed', output: { result: 'Refunded' } });
    expect(route(retried.logs)).toMatchObject({ case: 'billing', reused_from: failed.id });
    expect(finishedOf(await eventsOf(workflowId, retried.id), 'route')).toMatchObject([
      { case: 'billing', reused_from: failed.id },
    ]);

    fake.replies = [{ kind: 'completion', content: '{"category": "other", "amount": 1}' }];
    const other = await run(workflowId, { ticket: 'Hello' });
    expect(route(other.logs)).toMatchObject({ case: 'default' });
  });

  it('fails a matches pattern that backtracks without end with compute_limit, and the service goes on', async () => {
    const workflowId = await create({
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'text' } },
        { id: 'route', type: 'switch', config: { cases: [{ name: 'as', operator: 'matches', value: '^(a+)+$' }] } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'route' },
        { from: 'route', to: 'out', case: 'as' },
      ],
    });
    const stuck = await run(workflowId, { text: `${'a'.repeat(40)}!` });
    expect(stuck).toMatchObject({ status: 'failed', error: { code: 'compute_limit', node_id: 'route' } });
    const fine = await run(workflowId, { text: 'aaaa' });
    expect(fine).toMatchObject({ status: 'completed', output: { out: 'aaaa' } });
  });
});

describe('coalesce joins the branches of a switch (issue 33 item 6)', () => {
  it('takes the first non-empty output of the edges followed into it, in edge order', async () => {
    const graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'n', type: 'number' } },
        { id: 'route', type: 'switch', config: { cases: [{ name: 'big', operator: '>=', value: 10 }] } },
        { id: 'blank', type: 'template', config: { template: ' ' } },
        { id: 'big', type: 'template', config: { template: 'big {{ nodes.route.output }}' } },
        { id: 'small', type: 'template', config: { template: 'small {{ nodes.route.output }}' } },
        { id: 'answer', type: 'coalesce', config: {} },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'route' },
        { from: 'in', to: 'blank' },
        { from: 'route', to: 'big', case: 'big' },
        { from: 'route', to: 'small', case: 'default' },
        { from: 'blank', to: 'answer' },
        { from: 'big', to: 'answer' },
        { from: 'small', to: 'answer' },
        { from: 'answer', to: 'out' },
      ],
    } as Parameters<typeof executeGraph>[0];
    expect((await executeGraph(graph, { n: 12 }, createModelRouter({}))).output).toEqual({ out: 'big 12' });
    expect((await executeGraph(graph, { n: 3 }, createModelRouter({}))).output).toEqual({ out: 'small 3' });
  });
});
