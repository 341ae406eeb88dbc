// An llm_call whose model answers with tool calls, and a provider's error answer, in runs on a real
// HTTP server, store (PostgreSQL; MariaDB too with TEST_MYSQL_URL) and queue, against a local
// provider speaking OpenAI's wire format: the tool calls fail the node with
// `unexpected_tool_calls` (never a completed step with empty text), asked once, routed by
// `on_error`; a provider's error keeps its status, code, type and request id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAndRun, workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

const ask = (config: Record<string, unknown>) =>
  ({ id: 'ask', type: 'llm_call', config: { model: 'llama-3', ...config } }) as Node;
const plain = (askConfig: Record<string, unknown>): { nodes: Node[]; edges: Edge[] } => ({
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    ask(askConfig),
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'ask' },
    { from: 'ask', to: 'result' },
  ],
});
const routed: { nodes: Node[]; edges: Edge[] } = {
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    ask({ on_error: 'continue' }),
    { id: 'answer', type: 'template', config: { template: 'Answer: {{ nodes.ask.output }}' } },
    { id: 'apology', type: 'template', config: { template: '{{ nodes.ask.output | json }}' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'ask' },
    { from: 'ask', to: 'answer' },
    { from: 'ask', to: 'apology', case: 'error' },
    { from: 'answer', to: 'result' },
    { from: 'apology', to: 'result' },
  ],
};
const toolCalls = {
  kind: 'tool-calls' as const,
  calls: [
    { id: 'call_1', name: 'lookup_order', arguments: '{"id":42}' },
    { id: 'call_2', name: 'refund', arguments: '{"id":42}' },
  ],
};

describe.each(testDialects())('tool calls and provider errors in runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function start(g: { nodes: Node[]; edges: Edge[] }) {
    const run = await createAndRun(alice, { name: 'tools', ...g }, { ticket: 'Charged twice' }, 20);
    const step = (id: string) => run.logs.find((s) => s.node_id === id);
    return { run, step };
  }

  it.each([false, true])(
    'fails an llm_call answered with tool calls (streamed provider: %s), naming the tools, asked once',
    async (streams) => {
      fake.streams = streams;
      fake.replies = [toolCalls, { kind: 'completion', content: 'never asked' }];
      const asked = fake.requests.length;
      const { run, step } = await start(plain({ retry: { max_attempts: 3, backoff_seconds: 0 } }));
      fake.streams = true;
      fake.replies = [];
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'unexpected_tool_calls', node_id: 'ask' });
      expect(run.error!.message).toContain('"lookup_order", "refund"');
      expect(step('ask')).toMatchObject({ status: 'failed', error: { code: 'unexpected_tool_calls' } });
      expect(step('ask')!.output ?? null).toBeNull();
      expect(fake.requests.length - asked).toBe(1);
    },
  );

  it('routes the unexpected tool calls down the error edge with on_error: continue', async () => {
    fake.replies = [toolCalls];
    const { run, step } = await start(routed);
    expect(run.status).toBe('completed');
    const routedError = JSON.parse((run.output as Record<string, string>).result!) as { code: string; message: string };
    expect(routedError.code).toBe('unexpected_tool_calls');
    expect(routedError.message).toContain('"lookup_order"');
    expect(step('ask')!.status).toBe('failed');
    expect(step('answer')!.status).toBe('skipped');
  });

  it("keeps a provider's error status, code, type and request id in the step's and the run's error", async () => {
    fake.replies = [
      {
        kind: 'error',
        status: 400,
        message: 'This model does not support tools.',
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        requestId: 'req_7f3a9c',
      },
    ];
    const { run, step } = await start(plain({ retry: { max_attempts: 1 } }));
    const provider = {
      status: 400,
      code: 'unsupported_parameter',
      type: 'invalid_request_error',
      request_id: 'req_7f3a9c',
    };
    expect(run.error).toMatchObject({ code: 'provider_error', node_id: 'ask', provider });
    expect(step('ask')!.error).toMatchObject({ code: 'provider_error', provider });

    const fetched = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: run.workflow_id, run_id: run.id } },
    });
    expect(fetched.data?.data.error).toMatchObject({ provider });
  });
});
