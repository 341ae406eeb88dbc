import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';

// The gateway serves the demo models (echo-slow, echo-fail[-N]) exactly when DEMO_MODELS is on,
// as a workflow's llm_call does: one model router for both.

async function keyFor(server: TestServer): Promise<string> {
  const user = await createUser(server.ctx, { login: 'demo-gw', password: 'test-password-1' });
  return (
    await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'demo-gw',
      name: 'gateway',
      usageScenario: 'trial',
    })
  ).token;
}

const chat = (server: TestServer, key: string, body: unknown) =>
  fetch(`${server.baseUrl}/serverless/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

describe('the gateway with DEMO_MODELS on', () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { DEMO_MODELS: 'true' } });
    key = await keyFor(server);
  });
  afterAll(() => server?.close());

  it('streams echo-slow word by word, one chunk per word, and ends with [DONE]', async () => {
    const res = await chat(server, key, {
      model: 'echo-slow',
      stream: true,
      messages: [{ role: 'user', content: 'one two three' }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((f) => f.replace(/^data: /, ''));
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames
      .slice(0, -1)
      .map((f) => JSON.parse(f) as { model: string; choices: { delta: { content?: string } }[] });
    const pieces = chunks.map((c) => c.choices[0]?.delta.content ?? '').filter(Boolean);
    expect(pieces.join('')).toBe('one two three');
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    expect(chunks.every((c) => c.model === 'echo-slow')).toBe(true);
  });

  it('answers echo-fail with the OpenAI error shape (502), and echo-fail-1 after its one failure', async () => {
    const failed = await chat(server, key, { model: 'echo-fail', messages: [{ role: 'user', content: 'hi' }] });
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ error: { type: 'api_error' } });
    const recovered = await chat(server, key, {
      model: 'echo-fail-1',
      messages: [{ role: 'user', content: 'hi there' }],
    });
    expect(recovered.status).toBe(200);
    expect(await recovered.json()).toMatchObject({
      model: 'echo-fail-1',
      choices: [{ message: { content: 'hi there' } }],
    });
  });
});

describe('the gateway with DEMO_MODELS off (production default)', () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { DEMO_MODELS: 'false' } });
    key = await keyFor(server);
  });
  afterAll(() => server?.close());

  it('knows no demo model: 404 model_not_found', async () => {
    for (const model of ['echo-slow', 'echo-fail']) {
      const res = await chat(server, key, { model, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'model_not_found' } });
    }
  });
});
