// Error routing through runs, on a real HTTP server, store (PostgreSQL; MariaDB
// too with TEST_MYSQL_URL) and queue, with a local OpenAI-compatible provider answering 500: an
// llm_call with `on_error: continue` sends its error `{code, message}` down its `case: error` edge
// (its other edge skipped) and the run completes; on success the error edge is the skipped one;
// with `default`, that value flows on down the normal edges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAndRun } from '../../test/support/workflowUsers.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

const ask = (config: Record<string, unknown>): Node =>
  ({
    id: 'ask',
    type: 'llm_call',
    config: { model: 'llama-3', retry: { max_attempts: 1 }, on_error: 'continue', ...config },
  }) as Node;
const branched: { nodes: Node[]; edges: Edge[] } = {
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    ask({}),
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
const withDefault: { nodes: Node[]; edges: Edge[] } = {
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    ask({ default: { amount: 0 } }),
    { id: 'amount', type: 'template', config: { template: 'Amount {{ nodes.ask.output.amount }}' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'ask' },
    { from: 'ask', to: 'amount' },
    { from: 'amount', to: 'result' },
  ],
};

describe.each(testDialects())('error routing in runs on %s', (dialect) => {
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
    const user = await createUser(server.ctx, { login: 'alice', password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'alice',
      name: 'runs',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    alice = createApiClient(server.baseUrl, { bearer: token });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function run(graph: { nodes: Node[]; edges: Edge[] }) {
    const run = await createAndRun(alice, { name: 'errors', ...graph }, { ticket: 'Charged twice' }, 20);
    return { ...run, statuses: Object.fromEntries(run.logs.map((s) => [s.node_id, s.status])) };
  }

  it('sends a failed node’s error down its error edge only, and the run completes', async () => {
    fake.replies = [{ kind: 'error', status: 500, message: 'upstream melted' }];
    const failed = await run(branched);
    expect(failed.status).toBe('completed');
    expect(failed.statuses).toMatchObject({
      ask: 'failed',
      answer: 'skipped',
      apology: 'completed',
      result: 'completed',
    });
    const error = failed.logs.find((s) => s.node_id === 'ask')!.error!;
    expect(JSON.parse((failed.output as Record<string, string>).result!)).toEqual({
      code: error.code,
      message: error.message,
    });
    expect(error.message).toContain('upstream melted');
  });

  it('skips the error edge when the node succeeds', async () => {
    fake.replies = [{ kind: 'completion', content: 'Refunded.' }];
    const done = await run(branched);
    expect(done).toMatchObject({ status: 'completed', output: { result: 'Answer: Refunded.' } });
    expect(done.statuses).toMatchObject({ ask: 'completed', answer: 'completed', apology: 'skipped' });
  });

  it('gives a failed node’s default as its output down its normal edges', async () => {
    fake.replies = [{ kind: 'error', status: 500, message: 'upstream melted' }];
    const fallback = await run(withDefault);
    expect(fallback).toMatchObject({ status: 'completed', output: { result: 'Amount 0' } });
    expect(fallback.statuses).toMatchObject({ ask: 'failed', amount: 'completed' });
  });

  it('reads a null default as absent: the failed node goes on with an empty text', async () => {
    fake.replies = [{ kind: 'error', status: 500, message: 'upstream melted' }];
    const nullDefault = {
      ...withDefault,
      nodes: withDefault.nodes.map((n) => (n.id === 'ask' ? ask({ default: null }) : n)),
    };
    const fallback = await run(nullDefault);
    expect(fallback).toMatchObject({ status: 'completed', output: { result: 'Amount ' } });
    expect(fallback.statuses).toMatchObject({ ask: 'failed', amount: 'completed' });
  });
});
