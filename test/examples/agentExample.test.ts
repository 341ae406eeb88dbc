// examples/workflows/agent-two-tools.json saved through the API (its workflow tool pointing at
// agent-two-tools.lookup-order.json, saved first) and run by a worker against a local provider
// speaking OpenAI's wire format, which asks for both tools at once and then answers: the provider
// receives the tools and the tool messages, the weather API (a local server the operator allowed)
// receives the secret, and the run shows each tool call as a step.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { putSecret } from '../../src/secrets/service.ts';
import { Browser, logIn } from '../support/oauthFlow.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { testDialects } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { workflowsUser } from '../support/workflowUsers.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];

const example = (name: string): WorkflowCreate =>
  JSON.parse(readFileSync(new URL(`../../examples/workflows/${name}.json`, import.meta.url), 'utf8')) as WorkflowCreate;

const WEATHER_KEY = 'wk_live_5f1c9a27e3';

describe.each(testDialects())('example: an agent with two tools, on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let client: ApiClient;
  let weather: Server;
  let weatherUrl: string;
  const weatherCalls: { url: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    weather = createServer((req, res) => {
      weatherCalls.push({ url: req.url!, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ city: new URL(req.url!, 'http://x').searchParams.get('city'), sky: 'rain' }));
    });
    await new Promise<void>((resolve) => weather.listen(0, '127.0.0.2', resolve));
    weatherUrl = `http://127.0.0.2:${(weather.address() as AddressInfo).port}`;
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'gpt-4o-mini',
        WORKFLOW_HTTP_ALLOW_HOSTS: '127.0.0.2',
      },
    });
    const user = await workflowsUser(server.ctx, server.baseUrl, 'agents');
    client = user.client;
    await putSecret(server.ctx, user.userId, 'WEATHER_API_KEY', WEATHER_KEY);
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await new Promise((resolve) => weather?.close(resolve));
  });

  it('calls the workflow tool and the HTTP tool, sends their results back, and answers', async () => {
    const lookup = await client.POST('/api/workflows', { body: example('agent-two-tools.lookup-order') });
    expect(lookup.response.status, JSON.stringify(lookup.error)).toBe(201);
    const text = JSON.stringify(example('agent-two-tools'))
      .replaceAll('wf_LOOKUP_ORDER', lookup.data!.data.id)
      .replace('https://weather.example.com', weatherUrl);
    const created = await client.POST('/api/workflows', { body: JSON.parse(text) as WorkflowCreate });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);

    const asked = fake.requests.length;
    fake.replies = [
      {
        kind: 'tool-calls',
        calls: [
          { id: 'call_order', name: 'lookup_order', arguments: '{"order_id":"A-1042"}' },
          { id: 'call_weather', name: 'weather', arguments: '{"city":"São Paulo"}' },
        ],
      },
      { kind: 'completion', content: 'Your order A-1042 shipped on 2026-11-20; expect rain in São Paulo.' },
    ];
    const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: created.data!.data.id }, header: { Prefer: 'wait=30' } },
      body: { inputs: { question: 'Where is my order A-1042, and will it rain at delivery?' } },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    const run = data.data;
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.output).toEqual({ answer: 'Your order A-1042 shipped on 2026-11-20; expect rain in São Paulo.' });

    // The provider: the tools in OpenAI's format first, then the assistant's calls and one tool message per call.
    const [first, second] = fake.requests.slice(asked);
    expect(fake.requests.length - asked).toBe(2);
    expect(first!.tools!.map((t) => t.function.name)).toEqual(['lookup_order', 'weather']);
    expect(first!.tools![0]!.function.parameters).toEqual({
      type: 'object',
      properties: { order_id: { type: 'string' } },
      required: ['order_id'],
      additionalProperties: false,
    });
    expect(first!.parallel_tool_calls).toBe(true);
    const messages = second!.messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(messages[2]!.tool_calls).toHaveLength(2);
    expect(messages[3]).toMatchObject({
      tool_call_id: 'call_order',
      content: 'Order A-1042: shipped on 2026-11-20 by parcel post, 2 items.',
    });
    expect(messages[4]!.tool_call_id).toBe('call_weather');
    expect(JSON.parse(messages[4]!.content)).toEqual({ city: 'São Paulo', sky: 'rain' });

    // The weather API got the city from the arguments and the secret; the run holds neither the key nor its value.
    expect(weatherCalls.at(-1)!.url).toBe('/v1/current?city=S%C3%A3o+Paulo');
    expect(weatherCalls.at(-1)!.headers.authorization).toBe(`Bearer ${WEATHER_KEY}`);
    expect(JSON.stringify(run)).not.toContain(WEATHER_KEY);

    // Each tool call is a step, the workflow tool's own nodes under it; the agent's step counts both model calls.
    const step = (id: string) => run.logs.find((s) => s.node_id === id);
    expect(step('assistant[0].lookup_order')).toMatchObject({
      node_type: 'workflow',
      status: 'completed',
      input: '{"order_id":"A-1042"}',
      output: 'Order A-1042: shipped on 2026-11-20 by parcel post, 2 items.',
    });
    expect(step('assistant[0].lookup_order.status')?.status).toBe('completed');
    expect(step('assistant[1].weather')).toMatchObject({ node_type: 'http_request', status: 'completed' });
    expect(step('assistant[1].weather')!.output_value).toEqual({ city: 'São Paulo', sky: 'rain' });
    expect(step('assistant[1].weather')!.started_at).not.toBeNull();
    const usage = step('assistant')!.usage!;
    expect(step('assistant')!.attempts).toBe(2);
    expect(usage.total_tokens).toBeGreaterThan(0);
    expect(run.usage).toEqual(usage);

    // The console's run page lists the tool calls in the agent's row, with their arguments.
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'agents', 'correct horse battery', '/workflows')).status).toBe(303);
    const page = await (await browser.fetch(`/workflows/${run.workflow_id}/runs/${run.id}`)).text();
    expect(page).toContain('Tool calls (2)');
    expect(page).toContain('data-call="assistant[0].lookup_order"');
    expect(page).toContain('data-call="assistant[1].weather"');
    expect(page).toContain('{&quot;order_id&quot;:&quot;A-1042&quot;}');
    expect(page).not.toContain('data-call="assistant[0].lookup_order.status"');

    // The run's event stream (replayed, signed in as the console's page is) tells of each tool step too.
    const stream = await browser.fetch(`/workflows/${run.workflow_id}/runs/${run.id}/events`, {
      headers: { Accept: 'text/event-stream' },
    });
    const body = await stream.text();
    const blocks = body.split('\n\n');
    const finished = (id: string) =>
      blocks.some((b) => b.includes('event: node.finished') && b.includes(`"node_id":"${id}"`));
    expect(finished('assistant[0].lookup_order')).toBe(true);
    expect(finished('assistant[1].weather')).toBe(true);
    expect(body).not.toContain('"node_id":"assistant[0].lookup_order.status"'); // inside the tool, as inside a map item
  });
});
