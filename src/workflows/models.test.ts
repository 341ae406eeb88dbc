// GET /api/workflows/models through a real HTTP server and store (embedded PostgreSQL; MySQL too
// when TEST_MYSQL_URL is set): what it lists for each provider configuration, that a graph
// naming a listed model saves and one naming another does not, and who may ask.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

interface ModelList {
  data: { id: string; provider?: string; description?: string }[];
  accepts_other_models: boolean;
}

async function keyOf(server: TestServer, login: string, permissions: string[]): Promise<string> {
  const user = await createUser(server.ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(server.ctx, {
    userId: user.id,
    namespace: login,
    name: 'tests',
    usageScenario: 'paid',
    permissions,
  });
  return token;
}

const get = (server: TestServer, key?: string) =>
  fetch(`${server.baseUrl}/api/workflows/models`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

const graphNaming = (model: string) => ({
  name: `uses ${model}`,
  nodes: [
    { id: 'input', type: 'text_input', config: { variable: 'text' } },
    { id: 'answer', type: 'llm_call', config: { model, prompt: '{{ inputs.text }}' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'input', to: 'answer' },
    { from: 'answer', to: 'result' },
  ],
});

describe.each(testDialects())('GET /api/workflows/models on %s', (dialect) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      env: {
        MODEL_PROVIDER_BASE_URL: 'http://127.0.0.1:9/v1',
        MODEL_PROVIDER_MODELS: 'gpt-4o-mini,llama-3.1-8b',
        DEMO_MODELS: 'false',
      },
    });
    key = await keyOf(server, 'models-reader', ['workflows']);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists echo first, then each configured model, and what a save accepts is exactly that list', async () => {
    const res = await get(server, key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as ModelList;
    expect(body.accepts_other_models).toBe(false);
    expect(body.data.map((m) => [m.id, m.provider])).toEqual([
      ['echo', 'built_in'],
      ['gpt-4o-mini', 'openai_compatible'],
      ['llama-3.1-8b', 'openai_compatible'],
    ]);
    for (const m of body.data) expect(m.description).toBeTruthy();

    const save = (model: string) =>
      fetch(`${server.baseUrl}/api/workflows`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(graphNaming(model)),
      });
    for (const m of body.data) expect((await save(m.id)).status, m.id).toBe(201);
    const unlisted = await save('gpt-5');
    expect(unlisted.status).toBe(422);
    expect(JSON.stringify(await unlisted.json())).toContain('unknown model');
  });

  it('is 401 without credentials or with an unknown key, 403 for a key without the workflows permission', async () => {
    expect(await get(server)).toMatchObject({ status: 401 });
    const none = (await (await get(server)).json()) as { code: string };
    expect(none.code).toBe('missing_credentials');
    const unknown = await get(server, key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA'));
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { code: string }).code).toBe('invalid_api_key');
    const narrow = await get(server, await keyOf(server, 'models-narrow', []));
    expect(narrow.status).toBe(403);
    expect(((await narrow.json()) as { code: string }).code).toBe('missing_permission');
  });

  it('is not taken for a workflow id: GET /api/workflows/{id} still reads a workflow', async () => {
    const res = await fetch(`${server.baseUrl}/api/workflows/wf_doesnotexist`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(404);
  });
});

describe('GET /api/workflows/models with a provider that serves any model', () => {
  let server: TestServer;
  afterAll(async () => {
    await server?.close();
  });

  it('says other models are accepted, and lists the demo models when they are on', async () => {
    server = await startTestServer({
      env: { MODEL_PROVIDER_BASE_URL: 'http://127.0.0.1:9/v1', MODEL_PROVIDER_MODELS: '*', DEMO_MODELS: 'true' },
    });
    const key = await keyOf(server, 'models-any', ['workflows']);
    const body = (await (await get(server, key)).json()) as ModelList;
    expect(body.accepts_other_models).toBe(true);
    expect(body.data[0]).toMatchObject({ id: 'echo', provider: 'built_in' });
    expect(body.data.filter((m) => m.provider === 'demo').map((m) => m.id)).toContain('echo-slow');
    expect(body.data.some((m) => m.provider === 'openai_compatible')).toBe(false);
  });
});
