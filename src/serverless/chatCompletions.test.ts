import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken, deleteAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';

// The serverless gateway with a raw access token, and its OpenAI-shaped errors. (Proxy tokens:
// src/open/tokens.test.ts.)

describe.each(testDialects())('POST /serverless/v1/chat/completions (%s)', (dialect) => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let key: string;
  let keyId: number;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // An operator's limit below the contract's ceiling of 32768 (openapi.yaml), so that both refusals show.
    server = await startTestServer({
      dialect,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'llama-3',
        WORKFLOW_MAX_TOKENS_LIMIT: '4096',
      },
    });
    const user = await createUser(server.ctx, { login: 'gw', password: 'test-password-1' });
    // No permission at all: the gateway takes any raw access token.
    const created = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'gw',
      name: 'gateway',
      usageScenario: 'trial',
    });
    key = created.token;
    keyId = created.record.id;
  });
  afterAll(async () => {
    expect(server.logs.join('\n')).not.toContain(key);
    await server?.close();
    await fake?.close();
  });

  function chat(body: unknown, bearer: string | null = key): Promise<Response> {
    return fetch(`${server.baseUrl}/serverless/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: JSON.stringify(body),
    });
  }

  it('completes with echo for a raw access token and attributes the usage to it', async () => {
    const res = await chat({
      model: 'echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'one two three' },
      ],
      max_tokens: 2,
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'echo',
      choices: [{ index: 0, message: { role: 'assistant', content: 'one two' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    });
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(5);
    const usage = server.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.serverless_usage)
      .at(-1);
    expect(usage.serverless_usage).toMatchObject({
      access_token_id: keyId,
      usage_scenario: 'trial',
      via: 'api_key',
      model: 'echo',
      total_tokens: 7,
    });
  });

  it('forwards other models to the configured OpenAI-compatible provider', async () => {
    const res = await chat({ model: 'llama-3', messages: [{ role: 'user', content: 'shout this' }], temperature: 0.5 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      model: 'llama-3',
      choices: [{ message: { role: 'assistant', content: 'SHOUT THIS' } }],
    });
    expect(fake.requests.at(-1)).toMatchObject({ model: 'llama-3', temperature: 0.5 });
  });

  it('answers an unknown model with 404 model_not_found in the OpenAI error shape', async () => {
    const res = await chat({ model: 'gpt-9', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringContaining("'gpt-9'"),
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
  });

  it('answers a provider failure with 502 api_error, without the provider details', async () => {
    fake.replies.push(...[1, 2, 3].map(() => ({ kind: 'error' as const, status: 500, message: 'upstream exploded' })));
    const res = await chat({ model: 'llama-3', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    const body = await res.json();
    expect(body).toMatchObject({ error: { type: 'api_error', code: 'upstream_error' } });
    expect(JSON.stringify(body)).not.toContain('exploded');
  });

  it('answers an invalid body with 400 in the OpenAI shape, naming the parameter', async () => {
    const res = await chat({ model: 'echo', messages: [] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages' } });
    expect((await chat({ model: 'echo', messages: [{ role: 'user', content: 'x' }], stream: 'yes' })).status).toBe(400);
  });

  it('refuses max_tokens above WORKFLOW_MAX_TOKENS_LIMIT with 400 naming max_tokens, before calling the provider', async () => {
    const limit = server.ctx.config.WORKFLOW_MAX_TOKENS_LIMIT;
    expect(limit).toBe(4096);
    const calls = fake.requests.length;
    const res = await chat({ model: 'llama-3', messages: [{ role: 'user', content: 'hi' }], max_tokens: limit + 1 });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message: `max_tokens is too large: ${limit + 1}. This service allows at most ${limit}.`,
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: 'invalid_value',
      },
    });
    expect(fake.requests.length).toBe(calls);
    // The limit itself is allowed.
    expect((await chat({ model: 'echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: limit })).status).toBe(
      200,
    );
    // Above the contract's ceiling the validator answers, in the same shape.
    const aboveCeiling = await chat({ model: 'echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 32769 });
    expect(aboveCeiling.status).toBe(400);
    expect(await aboveCeiling.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'max_tokens' } });
    expect(fake.requests.length).toBe(calls);
  });

  it('answers 401 with WWW-Authenticate for no token, an unknown key, a malformed JWT, and a deleted key', async () => {
    const body = { model: 'echo', messages: [{ role: 'user', content: 'hi' }] };
    const none = await chat(body, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="serverless"');
    expect(await none.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
    expect((await chat(body, `sk_${'A'.repeat(43)}`)).status).toBe(401);
    const malformed = await chat(body, 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln');
    expect(malformed.status).toBe(401);
    // The operation's schemes are tried in the spec's order (proxyToken, then apiKey) and a JWT is
    // refused as a proxy token, not as "another kind of token" by the API-key check run beside it.
    expect(malformed.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="serverless", error="invalid_token", error_description="The proxy token is invalid/,
    );

    const user = await createUser(server.ctx, { login: 'gw2', password: 'test-password-1' });
    const doomed = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'gw2',
      name: 'doomed',
      usageScenario: 'paid',
    });
    expect((await chat(body, doomed.token)).status).toBe(200);
    await deleteAccessToken(server.ctx, user.id, doomed.record.id);
    expect((await chat(body, doomed.token)).status).toBe(401);
  });
});
