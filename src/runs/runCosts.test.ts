// Tokens and cost of runs on a real HTTP server, store (PostgreSQL; MariaDB too with
// TEST_MYSQL_URL) and queue, with a local provider speaking OpenAI's wire format (usage with
// prompt_tokens_details.cached_tokens) and a price table (MODEL_PRICES): each step and run is
// priced from the table, cached input at its own price; a model the table lacks has no cost; the
// tokens of calls that failed (an answer breaking its schema, an attempt that failed after
// reporting its usage) are counted and priced; the run events and testWorkflowNode carry costs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { replyGate, startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsApiKey } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

// USD per million tokens: 2.5 input (2500 nanos a token), 10 output (10000), 1.25 cached input (1250).
const PRICES = { 'gpt-priced': { input: 2.5, output: 10, cached_input: 1.25, currency: 'USD' } };
const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
/** Nanos -> the contract's units. */
const usd = (nanos: number) => Number((nanos / 1e9).toFixed(9));

const apiKeyFor = async (ctx: AppContext, login: string) => (await workflowsApiKey(ctx, login)).token;

const llm = (id: string, model: string, config: Record<string, unknown> = {}): Node =>
  ({ id, type: 'llm_call', config: { model, prompt: '{{ inputs.text }}', ...config } }) as Node;

describe.each(testDialects())('run costs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let key: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'gpt-priced,llama-unpriced',
        MODEL_PRICES: JSON.stringify(PRICES),
        METRICS_TOKEN,
      },
    });
    key = await apiKeyFor(server.ctx, 'alice');
    alice = createApiClient(server.baseUrl, { bearer: key });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function create(nodes: Node[], edges: Edge[]): Promise<string> {
    const { data, error } = await alice.POST('/api/workflows', { body: { name: 'costs', nodes, edges } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  async function run(workflowId: string, text: string) {
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
      body: { inputs: { text } },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    return data.data;
  }
  async function finishedEvents(workflowId: string, runId: string) {
    const stream = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}/events`, {
      headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
    });
    return (await stream.text())
      .split('\n\n')
      .filter((e) => e.includes('event: node.finished'))
      .map((e) => JSON.parse(/data: (.*)/.exec(e)![1]!) as Record<string, unknown>);
  }
  const chain = (nodes: Node[]): Edge[] => nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id }));

  it('prices each step from the table, cached input at its price; the run sums them; list, steps and events show them', async () => {
    // Prompt: 4 words = 4 tokens, 3 of them cached; answer: 2 words = 2 tokens.
    fake.replies = [{ kind: 'completion', content: 'two words', cachedTokens: 3 }];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('ask', 'gpt-priced'),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const workflowId = await create(nodes, chain(nodes));
    const ended = await run(workflowId, 'one two three four');
    expect(ended.status).toBe('completed');
    const step = ended.logs.find((s) => s.node_id === 'ask')!;
    expect(step.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6, cached_tokens: 3 });
    const input = 1 * 2500 + 3 * 1250;
    const output = 2 * 10_000;
    const cost = { currency: 'USD', input: usd(input), output: usd(output), total: usd(input + output) };
    expect(step.cost).toEqual(cost);
    expect(ended.cost).toEqual(cost);
    expect(ended.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 2, cached_tokens: 3 });
    // Nodes that call no model have none.
    expect(ended.logs.find((s) => s.node_id === 'in')!.cost).toBeNull();

    const list = await alice.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(list.data!.data[0]!.cost).toEqual(cost);
    const steps = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}/steps', {
      params: { path: { workflow_id: workflowId, run_id: ended.id } },
    });
    expect(steps.data!.data.find((s) => s.node_id === 'ask')!.cost).toEqual(cost);
    const events = await finishedEvents(workflowId, ended.id);
    expect(events.find((e) => e.node_id === 'ask')).toMatchObject({ cost });
  });

  it('a model the table lacks has no cost: its step is null, the run sums its priced steps (null when none)', async () => {
    fake.replies = [
      { kind: 'completion', content: 'a b c' },
      { kind: 'completion', content: 'd' },
    ];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('free', 'llama-unpriced'),
      llm('paid', 'gpt-priced', { prompt: 'x y' }),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const workflowId = await create(nodes, chain(nodes));
    const ended = await run(workflowId, 'hello');
    expect(ended.status).toBe('completed');
    expect(ended.logs.find((s) => s.node_id === 'free')!.cost).toBeNull();
    expect(ended.logs.find((s) => s.node_id === 'free')!.usage!.total_tokens).toBeGreaterThan(0);
    const paid = 2 * 2500 + 1 * 10_000;
    expect(ended.cost).toEqual({ currency: 'USD', input: usd(2 * 2500), output: usd(10_000), total: usd(paid) });

    fake.replies = [{ kind: 'completion', content: 'only' }];
    const unpricedNodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('free', 'llama-unpriced'),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const unpriced = await run(await create(unpricedNodes, chain(unpricedNodes)), 'hello');
    expect(unpriced.usage.total_tokens).toBeGreaterThan(0);
    expect(unpriced.cost).toBeNull();

    // The service's own model (echo) is free when a table is configured.
    const echoNodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('echo', 'echo'),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const echoed = await run(await create(echoNodes, chain(echoNodes)), 'hello');
    expect(echoed.logs.find((s) => s.node_id === 'echo')!.cost).toEqual({
      currency: 'USD',
      input: 0,
      output: 0,
      total: 0,
    });
    expect(echoed.cost).toMatchObject({ total: 0 });
  });

  it("counts and prices the tokens of an answer that broke its schema, and the run's", async () => {
    fake.replies = [{ kind: 'completion', content: '{"amount": "lots"}' }];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('extract', 'gpt-priced', {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'n', schema: { type: 'object', properties: { amount: { type: 'number' } } } },
        },
      }),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const ended = await run(await create(nodes, chain(nodes)), 'a b');
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'schema_violation' } });
    const step = ended.logs.find((s) => s.node_id === 'extract')!;
    expect(step.usage).toEqual({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 });
    const cost = { currency: 'USD', input: usd(5000), output: usd(20_000), total: usd(25_000) };
    expect(step.cost).toEqual(cost);
    expect(ended.usage).toEqual(step.usage);
    expect(ended.cost).toEqual(cost);
  });

  it('counts the tokens of an attempt that failed after reporting them, with the retry that answered', async () => {
    fake.replies = [
      {
        kind: 'stream-error',
        chunks: ['half'],
        usage: { prompt_tokens: 7, completion_tokens: 5 },
        message: 'overloaded',
      },
      { kind: 'completion', content: 'whole answer' },
    ];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('ask', 'gpt-priced', { retry: { max_attempts: 2, backoff_seconds: 0 } }),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const ended = await run(await create(nodes, chain(nodes)), 'a b c');
    expect(ended.status).toBe('completed');
    const step = ended.logs.find((s) => s.node_id === 'ask')!;
    expect(step.attempts).toBe(2);
    // 7 + 3 prompt tokens, 5 + 2 completion tokens.
    expect(step.usage).toEqual({ prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 });
    expect(step.cost).toMatchObject({ total: usd(10 * 2500 + 7 * 10_000) });
    expect(ended.usage).toEqual(step.usage);

    // Every attempt failing: the failed step still counts what the answers reported.
    fake.replies = [
      { kind: 'stream-error', chunks: ['x'], usage: { prompt_tokens: 4, completion_tokens: 1 }, message: 'overloaded' },
      { kind: 'stream-error', chunks: ['y'], usage: { prompt_tokens: 4, completion_tokens: 2 }, message: 'overloaded' },
    ];
    const failed = await run(await create(nodes, chain(nodes)), 'a b c');
    expect(failed.status).toBe('failed');
    expect(failed.logs.find((s) => s.node_id === 'ask')!.usage).toEqual({
      prompt_tokens: 8,
      completion_tokens: 3,
      total_tokens: 11,
    });
    expect(failed.cost).toMatchObject({ total: usd(8 * 2500 + 3 * 10_000) });
  });

  it("a retry's reused steps keep their cost, which the new run does not count again", async () => {
    fake.replies = [
      { kind: 'completion', content: 'first' },
      { kind: 'error', status: 400, message: 'bad request', type: 'invalid_request_error' },
    ];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('one', 'gpt-priced'),
      llm('two', 'gpt-priced', { prompt: 'u v' }),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const workflowId = await create(nodes, chain(nodes));
    const failed = await run(workflowId, 'a');
    expect(failed.status).toBe('failed');
    const first = { currency: 'USD', input: usd(2500), output: usd(10_000), total: usd(12_500) };
    expect(failed.cost).toEqual(first);

    fake.replies = [{ kind: 'completion', content: 'second' }];
    const { data } = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/retry', {
      params: { path: { workflow_id: workflowId, run_id: failed.id }, header: { Prefer: 'wait=20' } },
      body: {},
    });
    const retried = data!.data as Schemas['RunDetail'];
    expect(retried.status).toBe('completed');
    expect(retried.logs.find((s) => s.node_id === 'one')).toMatchObject({ reused_from: failed.id, cost: first });
    const second = 2 * 2500 + 10_000;
    expect(retried.cost).toEqual({ currency: 'USD', input: usd(5000), output: usd(10_000), total: usd(second) });
  });

  it('/metrics counts tokens by model and kind and cost by model and currency, and names the top spenders of the last 24 hours, the rest "other"', async () => {
    const metrics = async () => {
      const res = await fetch(`${server.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      return res.text();
    };
    const value = (text: string, line: string) =>
      Number(new RegExp(`^${line.replace(/[{}"()]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('ask', 'gpt-priced'),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const before = await metrics();
    fake.replies = [{ kind: 'completion', content: 'x y', cachedTokens: 1 }];
    await run(await create(nodes, chain(nodes)), 'a b c');
    const after = await metrics();
    const grew = (line: string) => value(after, line) - (value(before, line) || 0);
    expect(grew('workflow_model_tokens_total{model="gpt-priced",kind="input"}')).toBe(2);
    expect(grew('workflow_model_tokens_total{model="gpt-priced",kind="cached"}')).toBe(1);
    expect(grew('workflow_model_tokens_total{model="gpt-priced",kind="output"}')).toBe(2);
    expect(grew('workflow_model_cost_total{model="gpt-priced",currency="USD"}')).toBeCloseTo(
      usd(2 * 2500 + 1250 + 2 * 10_000),
      9,
    );

    // Twelve users spend, each a different amount: the ten who spent most are named, the rest summed as "other".
    const spenders: number[] = [];
    const tokensOf = new Map<number, number>();
    for (let i = 1; i <= 12; i++) {
      const login = `spender${i}`;
      const { token, userId } = await workflowsApiKey(server.ctx, login);
      const client = createApiClient(server.baseUrl, { bearer: token });
      const created = await client.POST('/api/workflows', { body: { name: 'spend', nodes, edges: chain(nodes) } });
      fake.replies = [{ kind: 'completion', content: Array.from({ length: i * 10 }, () => 'w').join(' ') }];
      const ran = await client.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: created.data!.data.id }, header: { Prefer: 'wait=20' } },
        body: { inputs: { text: 'a' } },
      });
      expect(ran.data!.data.status).toBe('completed');
      spenders.push(userId);
      tokensOf.set(userId, ran.data!.data.usage.total_tokens);
    }
    const users = [...(await metrics()).matchAll(/^workflow_user_cost_24h\{user="([^"]+)",currency="USD"\} (\S+)$/gm)];
    const named = users.map((m) => m[1]);
    expect(named).toHaveLength(11);
    expect(named).toContain('other');
    for (const id of spenders.slice(2)) expect(named).toContain(String(id));
    // The other: the two smallest spenders and alice's runs of the tests before.
    const other = Number(users.find((m) => m[1] === 'other')![2]);
    expect(other).toBeGreaterThan(usd(10 * 10_000 + 20 * 10_000));
    // Their tokens the same way: ten users by id (the two who used most with their run's total), the rest as "other".
    const byTokens = [...(await metrics()).matchAll(/^workflow_user_tokens_24h\{user="([^"]+)"\} (\S+)$/gm)];
    expect(byTokens.map((m) => m[1])).toHaveLength(11);
    for (const id of spenders.slice(-2))
      expect(Number(byTokens.find((m) => m[1] === String(id))?.[2])).toBe(tokensOf.get(id));
    expect(Number(byTokens.find((m) => m[1] === 'other')?.[2])).toBeGreaterThanOrEqual(tokensOf.get(spenders[0]!)!);
  });

  it('a run cancelled through the API keeps what its steps spent before the cancel', async () => {
    const gate = replyGate();
    let asked = 0;
    fake.answer = () => {
      asked++;
      return asked === 1
        ? { kind: 'completion', content: 'done' }
        : { kind: 'completion', content: 'late', until: gate.held };
    };
    try {
      const nodes: Node[] = [
        { id: 'in', type: 'text_input', config: { variable: 'text' } },
        llm('one', 'gpt-priced'),
        llm('two', 'gpt-priced'),
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ];
      const workflowId = await create(nodes, chain(nodes));
      const started = await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId } },
        body: { inputs: { text: 'a' } },
      });
      const runId = started.data!.data.id;
      const path = { workflow_id: workflowId, run_id: runId };
      // Cancel once the second call is under way (the first step ended, priced).
      while (asked < 2) await new Promise((r) => setTimeout(r, 20));
      const cancelled = await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', { params: { path } });
      expect(cancelled.data!.data.status).toBe('cancelled');
      const first = { currency: 'USD', input: usd(2500), output: usd(10_000), total: usd(12_500) };
      let detail = (await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).data!.data;
      for (let i = 0; i < 500 && detail.cost == null; i++) {
        await new Promise((r) => setTimeout(r, 20));
        detail = (await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).data!.data;
      }
      expect(detail.cost).toEqual(first);
      expect(detail.usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 1 });
      expect(detail.logs.find((s) => s.node_id === 'one')!.cost).toEqual(first);
    } finally {
      fake.answer = undefined;
      gate.release();
    }
  });

  it("an agent's step costs every model call of its loop", async () => {
    // First call: 1 prompt token, 7 completion tokens (a tool call the agent answers as unknown); then the answer.
    fake.replies = [
      { kind: 'tool-calls', calls: [{ id: 'c1', name: 'nowhere', arguments: '{}' }] },
      { kind: 'completion', content: 'fine' },
    ];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      {
        id: 'bot',
        type: 'agent',
        config: {
          model: 'gpt-priced',
          prompt: '{{ inputs.text }}',
          tools: [{ kind: 'http', name: 'lookup', description: 'looks up', url: 'https://example.com/x' }],
        },
      } as Node,
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const ended = await run(await create(nodes, chain(nodes)), 'q');
    expect(ended.status, JSON.stringify(ended.error)).toBe('completed');
    const step = ended.logs.find((s) => s.node_id === 'bot')!;
    const { prompt_tokens: p, completion_tokens: c } = step.usage!;
    expect(c).toBe(7 + 1);
    expect(step.cost).toEqual({
      currency: 'USD',
      input: usd(p * 2500),
      output: usd(c * 10_000),
      total: usd(p * 2500 + c * 10_000),
    });
    expect(ended.cost).toEqual(step.cost);
  });

  it('testWorkflowNode answers the cost of the test, and its step', async () => {
    fake.replies = [{ kind: 'completion', content: 'ok' }];
    const nodes: Node[] = [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      llm('ask', 'gpt-priced', { prompt: 'p q r' }),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const workflowId = await create(nodes, chain(nodes));
    const { data } = await alice.POST('/api/workflows/{workflow_id}/nodes/{node_id}/test', {
      params: { path: { workflow_id: workflowId, node_id: 'ask' } },
      body: { upstream: { in: 'whatever' } },
    });
    const cost = { currency: 'USD', input: usd(3 * 2500), output: usd(10_000), total: usd(3 * 2500 + 10_000) };
    expect(data!.data).toMatchObject({ status: 'completed', cost });
    expect(data!.data.logs[0]).toMatchObject({ node_id: 'ask', cost });
  });
});
