import { request, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';

// The gateway as OpenAI's own SDK (the `openai` npm package) uses it: streamed (`stream: true`,
// OpenAI's SSE chunks) and whole, and a provider's rate limit passed on as a 429.

describe.each(testDialects())('the gateway through the openai SDK (%s)', (dialect) => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    const user = await createUser(server.ctx, { login: 'sdk', password: 'test-password-1' });
    key = (
      await createAccessToken(server.ctx, { userId: user.id, namespace: 'sdk', name: 'sdk', usageScenario: 'paid' })
    ).token;
    client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/serverless/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    expect(server.logs.join('\n')).not.toContain(key);
    await server?.close();
    await fake?.close();
  });

  async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return {
      chunks,
      text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''),
      finishReason: chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason,
      usage: chunks.find((c) => c.usage)?.usage,
    };
  }

  it('streams echo chunk by chunk, with finish_reason and the usage chunk asked for by stream_options', async () => {
    const stream = await client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, finishReason, usage } = await collect(stream);
    expect(text).toBe('one two three');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]!.delta.content)).toEqual([
      'one ',
      'two ',
      'three',
    ]);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'echo')).toBe(true);
    expect(finishReason).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    expect(chunks.at(-1)!.choices).toEqual([]);
  });

  it('streams a provider model as the provider streams it, without a usage chunk unless asked', async () => {
    fake.replies = [{ kind: 'completion', content: 'from the provider' }];
    const stream = await client.chat.completions.create({
      model: 'llama-3',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const { text, usage, finishReason } = await collect(stream);
    expect(text).toBe('from the provider');
    expect(finishReason).toBe('stop');
    expect(usage).toBeUndefined();
    expect(fake.requests.at(-1)).toMatchObject({ model: 'llama-3', stream: true });
    const logged = server.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.serverless_usage)
      .at(-1);
    expect(logged.serverless_usage).toMatchObject({ model: 'llama-3', streamed: true, completion_tokens: 3 });
  });

  it('answers whole without stream, as before', async () => {
    const completion = await client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'whole answer' }],
    });
    expect(completion.choices[0]!.message.content).toBe('whole answer');
    expect(completion.usage).toMatchObject({ total_tokens: 4 });
  });

  it("passes a provider's 429 on as 429 with its Retry-After (an SDK RateLimitError), streamed or not", async () => {
    const limited = {
      kind: 'error' as const,
      status: 429,
      message: 'slow down',
      type: 'rate_limit_error',
      retryAfter: 1,
    };
    for (const stream of [false, true]) {
      fake.replies = [limited, limited, limited];
      const error = await client.chat.completions
        .create({ model: 'llama-3', messages: [{ role: 'user', content: 'hi' }], stream })
        .then(
          async (answer) => (Symbol.asyncIterator in answer ? collect(answer) : answer),
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');
      expect((error as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
      });
    }
    fake.replies = [];
  });

  it("holds the provider's stream while the caller reads nothing: a paused socket does not make the gateway buffer without bound", async () => {
    const sent = { bytes: 0, callerLeft: false };
    fake.replies = [{ kind: 'endless-stream', piece: 'x'.repeat(4096), sent }];
    const call = request(`${server.baseUrl}/serverless/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    });
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      call.on('response', resolve).on('error', reject);
      call.end(JSON.stringify({ model: 'llama-3', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    });
    expect(answer.statusCode).toBe(200);
    // The answer is never read: its socket fills, then the gateway's, then the provider's. Waits
    // until the provider's stream stands still (or 10 s), or until it has sent more than every
    // socket buffer on the way holds (8-11 MB here, tens of MB at most on loopback), which only a
    // gateway that keeps reading it into memory lets it do.
    const bound = 64 * 2 ** 20;
    const giveUp = Date.now() + 10_000;
    let still = 0;
    for (let last = -1; still < 3 && sent.bytes < bound && Date.now() < giveUp;) {
      await sleep(100);
      still = sent.bytes === last ? still + 1 : 0;
      last = sent.bytes;
    }
    expect(sent.bytes).toBeLessThan(bound);
    expect(still, 'the provider stream stood still (not merely slow for 10 s)').toBe(3);
    // The caller leaving while the gateway waits on it ends the provider call.
    call.destroy();
    await vi.waitFor(() => expect(sent.callerLeft).toBe(true));
  });

  it('a provider stream that breaks after some chunks ends with an error event the SDK raises', async () => {
    fake.replies = [{ kind: 'cut-stream', chunks: ['half ', 'an '] }];
    const stream = await client.chat.completions.create({
      model: 'llama-3',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const texts: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(texts.join('')).toBe('half an ');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('The model provider failed to answer.');
  });
});
