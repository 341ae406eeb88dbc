// One node run alone (testWorkflowNode), on a real HTTP server, store (PostgreSQL; MariaDB too
// with TEST_MYSQL_URL) and queue, against a local provider speaking OpenAI's wire format: the node
// runs on the pinned upstream values and answers its output, usage and log; no run is stored;
// pinned data that does not fit is a 400 naming the field, an unknown node a 404, another user's
// workflow a 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];

describe.each(testDialects())('testing one node on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;
  let workflowId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.answer = (request) => {
      const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
      if (user.includes('fail')) return { kind: 'error', status: 400, message: 'Bad prompt.', code: 'bad_prompt' };
      return { kind: 'completion', content: `summary(${user})` };
    };
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
    bob = await workflowsClient(server.ctx, server.baseUrl, 'bob');
    const created = await alice.POST('/api/workflows', {
      body: {
        name: 'summarise',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          { id: 'summarise', type: 'llm_call', config: { model: 'llama-3', retry: { max_attempts: 1 } } },
          {
            id: 'shape',
            type: 'template',
            config: { template: '{{ inputs.ticket }} -> {{ nodes.summarise.output }}' },
          },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ] as Node[],
        edges: [
          { from: 'in', to: 'summarise' },
          { from: 'summarise', to: 'shape' },
          { from: 'shape', to: 'result' },
        ],
      },
    });
    workflowId = created.data!.data.id;
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  const test = (nodeId: string, body: Schemas['NodeTestRequest'], client = alice) =>
    client.POST('/api/workflows/{workflow_id}/nodes/{node_id}/test', {
      params: { path: { workflow_id: workflowId, node_id: nodeId } },
      body,
    });

  it('runs an llm_call on its pinned upstream: one provider call, its output, usage and log; no run stored', async () => {
    const calls = fake.requests.length;
    const { data, error, response } = await test('summarise', { upstream: { in: 'Export is broken' } });
    if (!data) throw new Error(`test failed: ${JSON.stringify(error)}`);
    expect(response.status).toBe(200);
    expect(data.data).toMatchObject({
      node_id: 'summarise',
      node_type: 'llm_call',
      status: 'completed',
      output: 'summary(Export is broken)',
      error: null,
    });
    expect(data.data.usage.total_tokens).toBeGreaterThan(0);
    expect(data.data.logs.map((s) => [s.node_id, s.status, s.input])).toEqual([
      ['summarise', 'completed', 'Export is broken'],
    ]);
    expect(fake.requests.length).toBe(calls + 1);
    const runs = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(runs.data!.meta.total).toBe(0);
  });

  it('a template reads the pinned outputs and inputs; a text_output formats its upstream', async () => {
    const shaped = await test('shape', { inputs: { ticket: 'T-1' }, upstream: { summarise: 'short' } });
    expect(shaped.data!.data).toMatchObject({ status: 'completed', output: 'T-1 -> short' });
    const out = await test('result', { upstream: { shape: 'final words' } });
    expect(out.data!.data).toMatchObject({ status: 'completed', output: 'final words' });
  });

  it('a switch tested alone says the case it chose in its step', async () => {
    const created = await alice.POST('/api/workflows', {
      body: {
        name: 'routed',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          { id: 'route', type: 'switch', config: { cases: [{ name: 'big', operator: 'contains', value: 'big' }] } },
          { id: 'out', type: 'text_output', config: { format: 'plain' } },
        ] as Node[],
        edges: [
          { from: 'in', to: 'route' },
          { from: 'route', to: 'out', case: 'big' },
        ],
      },
    });
    const tested = await alice.POST('/api/workflows/{workflow_id}/nodes/{node_id}/test', {
      params: { path: { workflow_id: created.data!.data.id, node_id: 'route' } },
      body: { upstream: { in: 'a big one' } },
    });
    expect(tested.data!.data).toMatchObject({ status: 'completed', logs: [{ node_id: 'route', case: 'big' }] });
  });

  it("a provider's refusal is the node's failure (200 with status failed and the error)", async () => {
    const { data } = await test('summarise', { upstream: { in: 'please fail' } });
    expect(data!.data.status).toBe('failed');
    expect(data!.data.output).toBeNull();
    expect(data!.data.error).toMatchObject({ node_id: 'summarise' });
  });

  it('an approval node, which only a run can wait at, fails its test clearly: approval_unavailable, not a pause', async () => {
    const made = await alice.POST('/api/workflows', {
      body: {
        name: 'approve',
        nodes: [
          { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
          { id: 'ok', type: 'approval', config: { message: 'Send {{ inputs.ticket }}?' } },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ] as Node[],
        edges: [
          { from: 'in', to: 'ok' },
          { from: 'ok', to: 'result' },
        ],
      },
    });
    const { data, response } = await alice.POST('/api/workflows/{workflow_id}/nodes/{node_id}/test', {
      params: { path: { workflow_id: made.data!.data.id, node_id: 'ok' } },
      body: { inputs: { ticket: 'T-2' }, upstream: { in: 'T-2' } },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ status: 'failed', error: { code: 'approval_unavailable' } });
    expect(data!.data.error?.message).toContain('node test');
  });

  it('pinned data that does not fit is a 400 naming the field; an unknown node or a foreign workflow a 404', async () => {
    const missing = await test('summarise', {});
    expect(missing.response.status).toBe(400);
    expect(missing.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/upstream/in' }] });
    const unknown = await test('summarise', { upstream: { in: 'x', nowhere: 'y' } });
    expect(unknown.response.status).toBe(400);
    expect(unknown.error!.errors).toEqual([
      { pointer: '/body/upstream/nowhere', message: 'is not a node of this workflow' },
    ]);
    const noInput = await test('in', {});
    expect(noInput.response.status).toBe(400);
    expect(noInput.error).toMatchObject({ code: 'invalid_field', errors: [{ pointer: '/body/inputs/ticket' }] });
    const input = await test('in', { inputs: { ticket: 'T-2' } });
    expect(input.data!.data).toMatchObject({ status: 'completed', output: 'T-2' });
    const noNode = await test('absent', {});
    expect(noNode.response.status).toBe(404);
    expect(noNode.error).toMatchObject({ code: 'node_not_found' });
    const foreign = await test('summarise', { upstream: { in: 'x' } }, bob);
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: 'workflow_not_found' });
    const badVersion = await test('summarise', { version: 9, upstream: { in: 'x' } });
    expect(badVersion.response.status).toBe(400);
    expect(badVersion.error).toMatchObject({ code: 'invalid_field' });
  });
});
