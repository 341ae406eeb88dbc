// The example pipelines of examples/workflows/, each saved through the API and
// run by a worker against a local provider speaking the OpenAI wire format, whose answers depend
// on what each node sends it (a map's items call it concurrently, in any order).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];

const example = (name: string): WorkflowCreate =>
  JSON.parse(readFileSync(new URL(`../../examples/workflows/${name}.json`, import.meta.url), 'utf8')) as WorkflowCreate;

const systemOf = (request: FakeOpenAI['requests'][number]) =>
  request.messages.find((m) => m.role === 'system')?.content ?? '';
const userOf = (request: FakeOpenAI['requests'][number]) => request.messages.at(-1)?.content ?? '';

describe('example workflows', () => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let client: ApiClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'gpt-4o-mini' },
    });
    const user = await createUser(server.ctx, { login: 'examples', password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'examples',
      name: 'examples',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    client = createApiClient(server.baseUrl, { bearer: token });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  async function run(name: string, inputs: Record<string, unknown>) {
    const created = await client.POST('/api/workflows', { body: example(name) });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: created.data!.data.id }, header: { Prefer: 'wait=30' } },
      body: { inputs: inputs as Record<string, string> },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    return data.data;
  }

  it('map-reduce summary: the chunk summaries cover the whole text, in order (2,000 words, none lost)', async () => {
    // A chunk's "summary" names its first and last word; the combining call echoes its list.
    fake.answer = (request) => {
      if (systemOf(request).startsWith('Summarise this part')) {
        const words = userOf(request).match(/w\d+/g) ?? [];
        return { kind: 'completion', content: `${words[0]}-${words.at(-1)}` };
      }
      return { kind: 'completion', content: userOf(request) };
    };
    const document = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ');
    const result = await run('map-reduce-summary', { document });
    expect(result.status, JSON.stringify(result.error)).toBe('completed');
    // The combining prompt lists the map's results in order: `Part 1: w0-w169` ...
    const parts = [
      ...String((result.output as Record<string, unknown>).summary).matchAll(/Part (\d+): w(\d+)-w(\d+)/g),
    ];
    expect(parts.map((p) => Number(p[1]))).toEqual(parts.map((_, i) => i + 1));
    const ranges = parts.map((p) => `w${p[2]}-w${p[3]}`);
    expect(ranges.length).toBeGreaterThanOrEqual((2000 * 5) / 1000); // ~5.9 characters a word, 1,000 characters a chunk
    const bounds = parts.map((p) => [Number(p[2]), Number(p[3])]);
    expect(bounds[0]![0]).toBe(0);
    expect(bounds.at(-1)![1]).toBe(1999);
    for (let i = 1; i < bounds.length; i++) expect(bounds[i]![0]).toBe(bounds[i - 1]![1]! + 1);
    expect(result.logs.filter((s) => /^summaries\[\d+\]\.summarise$/.test(s.node_id))).toHaveLength(ranges.length);
  });

  it("classify and route: the switch sends the ticket down its label's branch only; a label it does not know goes to default", async () => {
    const labels: Record<string, string> = {
      'I was charged twice': 'Billing',
      'The export button crashes': ' bug\n',
      'Hello there': 'praise',
    };
    fake.answer = (request) => {
      if (systemOf(request).startsWith('Classify'))
        return { kind: 'completion', content: labels[userOf(request)] ?? 'other' };
      return { kind: 'completion', content: `REPORT: ${userOf(request)}` };
    };
    const billing = await run('classify-and-route', { ticket: 'I was charged twice' });
    expect(billing.output).toEqual({ result: 'Billing team: I was charged twice' });
    expect(
      billing.logs.filter((s) => ['billing', 'bug', 'other'].includes(s.node_id)).map((s) => [s.node_id, s.status]),
    ).toEqual(
      expect.arrayContaining([
        ['billing', 'completed'],
        ['bug', 'skipped'],
        ['other', 'skipped'],
      ]),
    );
    expect((await run('classify-and-route', { ticket: 'The export button crashes' })).output).toEqual({
      result: 'REPORT: The export button crashes',
    });
    expect((await run('classify-and-route', { ticket: 'Hello there' })).output).toEqual({
      result: 'General queue: Hello there',
    });
  });

  it('extract then branch: the answer is parsed and checked against the schema, the switch branches on its urgent field; a schema break fails the node', async () => {
    const facts: Record<string, string> = {
      'Prod is down, we lose 5000 an hour': '{"urgent": true, "amount": 5000, "summary": "Production outage"}',
      'Typo on the pricing page': '{"urgent": false, "amount": 0, "summary": "Pricing page typo"}',
      'Broken answer': '{"urgent": "yes", "amount": 1, "summary": "x"}',
    };
    fake.answer = (request) => ({ kind: 'completion', content: facts[userOf(request)] ?? '{}' });
    const urgent = await run('extract-then-branch', { ticket: 'Prod is down, we lose 5000 an hour' });
    expect(urgent.output).toEqual({ result: 'PAGE ON-CALL: Production outage (5000 at stake)' });
    expect(fake.requests.at(-1)).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'ticket_facts' } },
    });
    expect((await run('extract-then-branch', { ticket: 'Typo on the pricing page' })).output).toEqual({
      result: 'Queued: Pricing page typo',
    });
    const broken = await run('extract-then-branch', { ticket: 'Broken answer' });
    expect(broken).toMatchObject({ status: 'failed', error: { code: 'schema_violation', node_id: 'extract' } });
  });
});
