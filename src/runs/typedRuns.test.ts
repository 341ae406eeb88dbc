// Typed values through runs, on a real HTTP server, store (PostgreSQL; MariaDB
// too with TEST_MYSQL_URL) and queue, with a local OpenAI-compatible provider: an llm_call with
// `response_format` outputs the parsed, schema-checked value; typed text_inputs take JSON values;
// the run and its steps keep their text fields and add the values beside them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

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

const invoice = {
  type: 'object',
  required: ['amount'],
  properties: { amount: { type: 'number' }, urgent: { type: 'boolean' } },
  additionalProperties: false,
};
const extractGraph = (model: string): { nodes: Node[]; edges: Edge[] } => ({
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    {
      id: 'extract',
      type: 'llm_call',
      config: { model, response_format: { type: 'json_schema', json_schema: { name: 'invoice', schema: invoice } } },
    },
    {
      id: 'say',
      type: 'template',
      config: {
        template: 'Amount {{ nodes.extract.output.amount }}{% if nodes.extract.output.urgent %}, urgent{% endif %}',
      },
    },
    { id: 'value', type: 'text_output', config: { format: 'json' } },
    { id: 'text', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'extract' },
    { from: 'extract', to: 'say' },
    { from: 'extract', to: 'value' },
    { from: 'say', to: 'text' },
  ],
});

describe.each(testDialects())('typed values in runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let key: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    key = await apiKeyFor(server.ctx, 'alice');
    alice = createApiClient(server.baseUrl, { bearer: key });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function create(graph: { nodes: Node[]; edges: Edge[] }): Promise<string> {
    const { data, error } = await alice.POST('/api/workflows', { body: { name: 'typed', ...graph } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  /** Starts a run and waits for its end (Prefer: wait), as a blocking client does. */
  async function run(workflowId: string, inputs: Record<string, unknown>, idempotencyKey?: string) {
    const { data, error, response } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: {
        path: { workflow_id: workflowId },
        header: { Prefer: 'wait=20', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
      },
      body: { inputs: inputs as Schemas['RunRequest']['inputs'] },
    });
    return { run: data?.data, error, status: response.status };
  }

  it('asks the provider for JSON and outputs the answer parsed; templates read its fields; the step keeps its text and adds the value', async () => {
    fake.replies = [{ kind: 'completion', content: '{"amount": 12.5, "urgent": true}' }];
    const workflowId = await create(extractGraph('llama-3'));
    const { run: ended } = await run(workflowId, { text: 'Invoice: 12.50 EUR, pay today' });
    expect(ended).toMatchObject({
      status: 'completed',
      output: { value: { amount: 12.5, urgent: true }, text: 'Amount 12.5, urgent' },
    });
    expect((fake.requests.at(-1) as unknown as { response_format: unknown }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'invoice', schema: invoice },
    });
    const step = ended!.logs.find((s) => s.node_id === 'extract')!;
    expect(step).toMatchObject({
      status: 'completed',
      output: '{"amount":12.5,"urgent":true}',
      output_value: { amount: 12.5, urgent: true },
    });
    // A text output has no output_value: `output` is the value.
    expect(ended!.logs.find((s) => s.node_id === 'say')).not.toHaveProperty('output_value');

    // The stream's node.finished carries the value too.
    const stream = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${ended!.id}/events`, {
      headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
    });
    const finished = (await stream.text())
      .split('\n\n')
      .filter((e) => e.includes('event: node.finished'))
      .map((e) => JSON.parse(/data: (.*)/.exec(e)![1]!) as Record<string, unknown>);
    expect(finished.find((e) => e.node_id === 'extract')).toMatchObject({
      output_value: { amount: 12.5, urgent: true },
    });
  });

  it('fails the node with schema_violation naming the schema path when the answer breaks the schema', async () => {
    fake.replies = [{ kind: 'completion', content: '{"amount": "lots"}' }];
    const { run: ended } = await run(await create(extractGraph('llama-3')), { text: 'x' });
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'schema_violation', node_id: 'extract' } });
    expect(ended!.error!.message).toBe(
      "The model's answer breaks the schema at /amount: must be number (schema path /properties/amount/type)",
    );
    // The failed step keeps the answer as sent and counts its tokens, as does the run; the run's own error stays small.
    const step = ended!.logs.find((s) => s.node_id === 'extract')!;
    expect(step.error).toMatchObject({ code: 'schema_violation', raw_output: '{"amount": "lots"}' });
    expect(step.usage!.completion_tokens).toBeGreaterThan(0);
    expect(step.usage!.total_tokens).toBe(step.usage!.prompt_tokens + step.usage!.completion_tokens);
    expect(ended!.usage).toEqual(step.usage);
    expect(ended!.error).not.toHaveProperty('raw_output');
  });

  it('fails the node with invalid_json when the answer is not JSON', async () => {
    fake.replies = [{ kind: 'completion', content: 'Sure! The amount is 12.5' }];
    const workflowId = await create(extractGraph('llama-3'));
    const { run: ended } = await run(workflowId, { text: 'x' });
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'invalid_json', node_id: 'extract' } });
    const step = ended!.logs.find((s) => s.node_id === 'extract')!;
    expect(step).toMatchObject({ output: null, error: { raw_output: 'Sure! The amount is 12.5' } });
    expect(ended!.usage.total_tokens).toBeGreaterThan(0);
    // The stream's node.finished carries it too.
    const stream = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${ended!.id}/events`, {
      headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
    });
    const finished = (await stream.text())
      .split('\n\n')
      .filter((e) => e.includes('event: node.finished'))
      .map((e) => JSON.parse(/data: (.*)/.exec(e)![1]!) as Record<string, unknown>);
    expect(finished.find((e) => e.node_id === 'extract')).toMatchObject({
      usage: step.usage,
      error: { code: 'invalid_json', raw_output: 'Sure! The amount is 12.5' },
    });
  });

  it('takes JSON values for typed text_inputs: inputs as text, input_values as given; a mistyped one is a 400', async () => {
    const workflowId = await create({
      nodes: [
        {
          id: 'order',
          type: 'text_input',
          config: {
            variable: 'order',
            type: 'object',
            schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'number' } } },
          },
        },
        { id: 'count', type: 'text_input', config: { variable: 'count', type: 'integer' } },
        { id: 'say', type: 'template', config: { template: '{{ inputs.count }} x {{ nodes.order.output.amount }}' } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'order', to: 'say' },
        { from: 'count', to: 'say' },
        { from: 'say', to: 'out' },
      ],
    });
    const { run: ended } = await run(workflowId, { order: { amount: 5 }, count: 3 }, 'typed-1');
    expect(ended).toMatchObject({
      status: 'completed',
      output: { out: '3 x 5' },
      inputs: { order: '{"amount":5}', count: '3' },
      input_values: { order: { amount: 5 }, count: 3 },
    });
    expect(ended!.logs.find((s) => s.node_id === 'order')).toMatchObject({
      output: '{"amount":5}',
      output_value: { amount: 5 },
    });

    // The same values with their keys in another order are the same inputs: the same run.
    const again = await run(workflowId, { count: 3, order: { amount: 5 } }, 'typed-1');
    expect(again.run?.id).toBe(ended!.id);

    const refused = await run(workflowId, { order: 'amount 5', count: 2.5 });
    expect(refused.status).toBe(400);
    expect((refused.error as { errors: unknown[] }).errors).toEqual([
      { pointer: '/body/inputs/order', message: 'must be an object' },
      { pointer: '/body/inputs/count', message: 'must be an integer' },
    ]);

    // The input's schema is checked when its node runs, in the compute pool.
    const broken = await run(workflowId, { order: { amount: 'five' }, count: 1 });
    expect(broken.run).toMatchObject({ status: 'failed', error: { code: 'schema_violation', node_id: 'order' } });
    expect(broken.run!.error!.message).toContain('at /amount: must be number');
  });

  it('keeps a text input a string: a number for an untyped text_input is a 400, as before', async () => {
    const workflowId = await create(extractGraph('echo'));
    const refused = await run(workflowId, { text: 42 });
    expect(refused.status).toBe(400);
    expect((refused.error as { errors: unknown[] }).errors).toEqual([
      { pointer: '/body/inputs/text', message: 'must be a string' },
    ]);
    const { run: ended } = await run(workflowId, { text: '{"amount": 1}' });
    expect(ended).toMatchObject({
      status: 'completed',
      inputs: { text: '{"amount": 1}' },
      output: { value: { amount: 1 }, text: 'Amount 1' },
    });
    expect(ended).not.toHaveProperty('input_values');
  });
});
