// The agent node in runs on a real HTTP server, store (PostgreSQL; MariaDB too with
// TEST_MYSQL_URL) and queue, against a local provider speaking OpenAI's wire format and a local
// HTTP API the operator allowed: the tool loop, calls run together, max_iterations and the
// operator's cap, a forced tool_choice, calls that cannot run or whose tool fails answered to the
// model (never a crash), a typed final answer, and the save's refusals.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];
type Graph = { nodes: Node[]; edges: Schemas['WorkflowEdge'][] };

const agentGraph = (config: Record<string, unknown>): Graph => ({
  nodes: [
    { id: 'q', type: 'text_input', config: { variable: 'question' } },
    { id: 'bot', type: 'agent', config: { model: 'llama-3', prompt: '{{ inputs.question }}', ...config } } as Node,
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'q', to: 'bot' },
    { from: 'bot', to: 'out' },
  ],
});
const calls = (...list: [string, string, string][]): FakeReply => ({
  kind: 'tool-calls',
  calls: list.map(([id, name, args]) => ({ id, name, arguments: args })),
});
const answer = (content: string): FakeReply => ({ kind: 'completion', content });

describe.each(testDialects())('agent nodes in runs on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;
  let api: Server;
  let apiUrl: string;
  /** Requests to /pair wait until two are in flight: only calls run together both complete. */
  let waiting: (() => void)[] = [];
  /** Requests to /hold wait until the test lets them go (a tool slower than its timeout). */
  const held: (() => void)[] = [];

  beforeAll(async () => {
    api = createServer((req, res) => {
      const reply = () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`ok ${req.url}`);
      };
      if (req.url!.startsWith('/broken')) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('database down');
      } else if (req.url!.startsWith('/pair')) {
        waiting.push(reply);
        if (waiting.length === 2) [waiting, (waiting = [])][0]!.forEach((go) => go());
      } else if (req.url!.startsWith('/hold')) held.push(reply);
      else reply();
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.2', resolve));
    apiUrl = `http://127.0.0.2:${(api.address() as AddressInfo).port}`;
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'llama-3',
        WORKFLOW_HTTP_ALLOW_HOSTS: '127.0.0.2',
        AGENT_MAX_ITERATIONS_CAP: '3',
      },
    });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
    bob = await workflowsClient(server.ctx, server.baseUrl, 'bob');
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await new Promise((resolve) => api?.close(resolve));
  });

  const http = (name: string, path: string, extra: Record<string, unknown> = {}) => ({
    kind: 'http',
    name,
    description: `calls ${path}`,
    url: `${apiUrl}${path}`,
    parameters: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    ...extra,
  });

  async function create(client: ApiClient, graph: Graph) {
    return client.POST('/api/workflows', { body: { name: 'agent', ...graph } });
  }

  async function runAgent(graph: Graph, replies: FakeReply[]) {
    const created = await create(alice, graph);
    if (!created.data) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
    const asked = fake.requests.length;
    fake.replies = replies;
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: created.data.data.id }, header: { Prefer: 'wait=30' } },
      body: { inputs: { question: 'Help' } },
    });
    fake.replies = [];
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    const step = (id: string) => data.data.logs.find((s) => s.node_id === id);
    return { run: data.data, step, requests: fake.requests.slice(asked) };
  }

  it('runs the calls of one answer together, each a step, and sends the results back in order', async () => {
    const { run, step, requests } = await runAgent(
      agentGraph({
        tools: [http('left', '/pair?side=left'), http('right', '/pair?side=right', { timeout_seconds: 20 })],
      }),
      [calls(['c1', 'right', '{"n":1}'], ['c2', 'left', '{"n":2}']), answer('both done')],
    );
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.output).toEqual({ out: 'both done' });
    const tools = requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'ok /pair?side=right' },
      { role: 'tool', tool_call_id: 'c2', content: 'ok /pair?side=left' },
    ]);
    expect(step('bot[0].right')).toMatchObject({ status: 'completed', input: '{"n":1}' });
    expect(step('bot[1].left')).toMatchObject({ status: 'completed', input: '{"n":2}' });
  });

  it('answers an unknown tool, arguments that are not JSON or do not fit, and a failing tool to the model', async () => {
    const { run, step, requests } = await runAgent(
      agentGraph({ tools: [http('fetch', '/ok'), http('broken', '/broken')] }),
      [
        calls(
          ['u', 'delete_all', '{}'],
          ['j', 'fetch', '{"n":'],
          ['s', 'fetch', '{"n":"two"}'],
          ['b', 'broken', '{"n":1}'],
        ),
        answer('sorry'),
      ],
    );
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    const told = requests[1]!.messages
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(m.content) as { error: { code: string; message: string } });
    expect(told.map((t) => t.error.code)).toEqual(['unknown_tool', 'invalid_json', 'schema_violation', 'http_status']);
    expect(told[0]!.error.message).toContain('"fetch", "broken"');
    expect(told[3]!.error.message).toContain('database down');
    expect(step('bot[1].fetch')).toMatchObject({ status: 'failed', error: { code: 'invalid_json' } });
    expect(step('bot[2].fetch')).toMatchObject({ status: 'failed', error: { code: 'schema_violation' } });
    expect(step('bot[3].broken')).toMatchObject({ status: 'failed', error: { code: 'http_status' } });
    expect(step('bot')!.status).toBe('completed');
  });

  it("answers a workflow tool's failure to the model, naming its step", async () => {
    const callee = await create(alice, {
      nodes: [
        { id: 'x', type: 'text_input', config: { variable: 'x' } },
        { id: 'parse', type: 'template', config: { template: '{{ inputs.x | parse_json }}' } },
        { id: 'r', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'x', to: 'parse' },
        { from: 'parse', to: 'r' },
      ],
    });
    const tool = {
      kind: 'workflow',
      name: 'parse',
      description: 'parses',
      workflow_id: callee.data!.data.id,
      version: 1,
    };
    const { run, step, requests } = await runAgent(agentGraph({ tools: [tool] }), [
      calls(['p', 'parse', '{"x":"not json"}']),
      answer('could not parse'),
    ]);
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(requests[0]!.tools![0]!.function.parameters).toMatchObject({ required: ['x'] });
    const told = JSON.parse(requests[1]!.messages.at(-1)!.content) as { error: { code: string; message: string } };
    expect(told.error.code).toBe('template_error');
    expect(told.error.message).toContain('bot[0].parse.parse');
    expect(step('bot[0].parse')).toMatchObject({ node_type: 'workflow', status: 'failed' });
    expect(step('bot[0].parse.parse')!.status).toBe('failed');
  });

  it('tells the model of a tool that passed its timeout_seconds, and goes on', async () => {
    const { run, step, requests } = await runAgent(
      agentGraph({ tools: [http('slow', '/hold', { timeout_seconds: 0.2 })] }),
      [calls(['s', 'slow', '{"n":1}']), answer('it timed out')],
    );
    held.splice(0).forEach((go) => go());
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    const told = JSON.parse(requests[1]!.messages.at(-1)!.content) as { error: { code: string } };
    expect(told.error.code).toBe('tool_timeout');
    expect(step('bot[0].slow')).toMatchObject({ status: 'failed', error: { code: 'tool_timeout' } });
  });

  it('fails with agent_max_iterations at max_iterations, and at the operator cap below it, counting every call', async () => {
    const loop = (n: number) => Array.from({ length: n }, (_, i) => calls([`c${i}`, 'fetch', '{"n":1}']));
    const two = await runAgent(agentGraph({ tools: [http('fetch', '/ok')], max_iterations: 2 }), loop(5));
    expect(two.run.error).toMatchObject({ code: 'agent_max_iterations', node_id: 'bot' });
    expect(two.requests).toHaveLength(2);
    expect(two.step('bot')!.usage!.total_tokens).toBeGreaterThan(0);
    expect(two.run.usage).toEqual(two.step('bot')!.usage);
    expect(two.step('bot[1].fetch')!.status).toBe('completed');

    const routed = await runAgent(
      {
        ...agentGraph({ tools: [http('fetch', '/ok')], max_iterations: 1, on_error: 'continue', default: 'no answer' }),
      },
      loop(1),
    );
    expect(routed.run.status).toBe('completed');
    expect(routed.run.output).toEqual({ out: 'no answer' });
    expect(routed.step('bot')).toMatchObject({ status: 'failed', error: { code: 'agent_max_iterations' } });

    const capped = await runAgent(agentGraph({ tools: [http('fetch', '/ok')], max_iterations: 10 }), loop(5));
    expect(capped.run.error).toMatchObject({ code: 'agent_max_iterations' });
    expect(capped.run.error!.message).toContain('AGENT_MAX_ITERATIONS_CAP 3');
    expect(capped.requests).toHaveLength(3);
  });

  it('forces a named tool on the first call only, and passes parallel_tool_calls', async () => {
    const { run, requests } = await runAgent(
      agentGraph({ tools: [http('fetch', '/ok')], tool_choice: 'fetch', parallel_tool_calls: false }),
      [calls(['c', 'fetch', '{"n":1}']), answer('done')],
    );
    expect(run.status).toBe('completed');
    expect(requests[0]!.tool_choice).toEqual({ type: 'function', function: { name: 'fetch' } });
    expect(requests[1]!.tool_choice).toBeUndefined();
    expect(requests.map((r) => r.parallel_tool_calls)).toEqual([false, false]);
  });

  it('parses a typed final answer, and keeps one that breaks the schema on the failed step', async () => {
    const format = {
      type: 'json_schema',
      json_schema: { name: 'a', schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    };
    const good = await runAgent(agentGraph({ tools: [http('fetch', '/ok')], response_format: format }), [
      answer('{"n":3}'),
    ]);
    expect(good.run.status).toBe('completed');
    expect(good.step('bot')!.output_value).toEqual({ n: 3 });
    expect(good.requests[0]!.response_format).toEqual(format);

    const bad = await runAgent(agentGraph({ tools: [http('fetch', '/ok')], response_format: format }), [
      answer('{"n":"x"}'),
    ]);
    expect(bad.run.error).toMatchObject({ code: 'schema_violation', node_id: 'bot' });
    expect(bad.step('bot')!.error).toMatchObject({ raw_output: '{"n":"x"}' });
    expect(bad.step('bot')!.usage!.total_tokens).toBeGreaterThan(0);
  });

  it("refuses at save another user's workflow, a version it lacks, a repeated name, a kind's missing field and an unknown tool_choice", async () => {
    const theirs = await create(bob, agentGraph({ tools: [http('fetch', '/ok')] }));
    const mine = await create(alice, {
      nodes: [
        { id: 'x', type: 'text_input', config: { variable: 'x' } },
        { id: 'r', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [{ from: 'x', to: 'r' }],
    });
    const wf = (id: string, version: number) => ({
      kind: 'workflow',
      name: `w${version}`,
      description: 'd',
      workflow_id: id,
      version,
    });
    const refused = await create(
      alice,
      agentGraph({
        tools: [
          wf(theirs.data!.data.id, 1),
          wf(mine.data!.data.id, 7),
          http('fetch', '/ok'),
          http('fetch', '/ok'),
          { kind: 'workflow', name: 'nothing', description: 'd', url: 'https://example.com' },
        ],
        tool_choice: 'missing',
      }),
    );
    expect(refused.response.status).toBe(422);
    const pointers = (refused.error as { errors: { pointer: string }[] }).errors.map((e) => e.pointer);
    expect(pointers).toEqual(
      expect.arrayContaining([
        '/nodes/1/config/tools/0/workflow_id',
        '/nodes/1/config/tools/1/workflow_id',
        '/nodes/1/config/tools/3/name',
        '/nodes/1/config/tools/4/workflow_id',
        '/nodes/1/config/tools/4/url',
        '/nodes/1/config/tool_choice',
      ]),
    );
  });
});
