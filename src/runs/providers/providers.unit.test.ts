import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../../test/support/fakeOpenAI.ts';
import { createModelRouter, ModelUnavailableError, ProviderError } from './index.ts';
import { openAICompatibleProvider } from './openaiCompatible.ts';
import { parsePriceTable } from '../../shared/prices.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const ask = (content: string) => ({ model: 'llama-3', messages: [{ role: 'user' as const, content }] });

describe('model providers', () => {
  it('echo answers with the last user message and counts words as usage', async () => {
    const router = createModelRouter({});
    const result = await router.complete({
      model: 'echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(result).toEqual({
      model: 'echo',
      content: 'hello there',
      finishReason: 'stop',
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
    });
  });

  it('echo honours max_tokens and reports finish_reason length', async () => {
    const result = await createModelRouter({}).complete({
      model: 'echo',
      messages: [{ role: 'user', content: 'one two three' }],
      max_tokens: 2,
    });
    expect(result.content).toBe('one two');
    expect(result.finishReason).toBe('length');
  });

  it('an unknown model is ModelUnavailableError', async () => {
    await expect(createModelRouter({}).complete(ask('x'))).rejects.toBeInstanceOf(ModelUnavailableError);
  });

  it('routes configured models to the OpenAI-compatible API and sends its parameters', async () => {
    const router = createModelRouter({
      MODEL_PROVIDER_BASE_URL: fake.baseUrl,
      MODEL_PROVIDER_API_KEY: 'k',
      MODEL_PROVIDER_MODELS: 'llama-3',
    });
    const result = await router.complete({ ...ask('hi'), temperature: 0.3, max_tokens: 9 });
    expect(result.content).toBe('HI');
    expect(result.usage.total_tokens).toBeGreaterThan(0);
    expect(fake.requests.at(-1)).toMatchObject({ model: 'llama-3', temperature: 0.3, max_tokens: 9 });
    expect(router.has('gpt-unknown')).toBe(false);
  });

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    fake.replies = [
      { kind: 'error', status: 429, message: 'Rate limit reached', type: 'rate_limit_error', retryAfter: 0 },
      { kind: 'error', status: 503, message: 'overloaded' },
      { kind: 'completion', content: 'done' },
    ];
    const provider = openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], backoffMs: 1 });
    const before = fake.requests.length;
    expect((await provider.complete(ask('x'))).content).toBe('done');
    expect(fake.requests.length - before).toBe(3);
  });

  it('does not retry a 400 and reports the provider message', async () => {
    fake.replies = [{ kind: 'error', status: 400, message: 'context too long', type: 'invalid_request_error' }];
    const provider = openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], backoffMs: 1 });
    const before = fake.requests.length;
    const error = await provider.complete(ask('x')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(400);
    expect((error as Error).message).toContain('context too long');
    expect(fake.requests.length - before).toBe(1);
  });

  it('gives up after the last attempt', async () => {
    fake.replies = Array.from({ length: 3 }, () => ({ kind: 'error' as const, status: 500, message: 'boom' }));
    const provider = openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], backoffMs: 1, maxAttempts: 3 });
    await expect(provider.complete(ask('x'))).rejects.toThrow(/answered 500: boom/);
  });

  it('times out a provider that does not answer', async () => {
    fake.replies = [{ kind: 'hang' }];
    const provider = openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], timeoutMs: 100, maxAttempts: 1 });
    await expect(provider.complete(ask('x'))).rejects.toBeInstanceOf(ProviderError);
  });

  it('stops at once when the caller aborts (run cancelled)', async () => {
    fake.replies = [{ kind: 'hang' }];
    const provider = openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], timeoutMs: 60_000 });
    const controller = new AbortController();
    const call = provider.complete({ ...ask('x'), signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    await expect(call).rejects.toThrow('cancelled');
  });

  describe('streaming (stream: true, OpenAI chunks)', () => {
    const provider = () => openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], backoffMs: 1 });

    it('hands each chunk to onDelta as it comes, and takes usage from the last chunk', async () => {
      fake.replies = [{ kind: 'completion', content: 'alpha beta gamma' }];
      const deltas: string[] = [];
      const result = await provider().complete({ ...ask('x'), onDelta: (t) => void deltas.push(t) });
      expect(fake.requests.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(deltas).toEqual(['alpha ', 'beta ', 'gamma']);
      expect(result).toMatchObject({
        content: 'alpha beta gamma',
        finishReason: 'stop',
        usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
      });
    });

    it('a provider answering one JSON completion instead is taken as one chunk', async () => {
      fake.streams = false;
      try {
        const deltas: string[] = [];
        const result = await provider().complete({ ...ask('quiet please'), onDelta: (t) => void deltas.push(t) });
        expect(deltas).toEqual(['QUIET PLEASE']);
        expect(result.content).toBe('QUIET PLEASE');
      } finally {
        fake.streams = true;
      }
    });

    it('a stream cut before its end is retried (issue 33), and the caller is told its chunks so far are void', async () => {
      fake.replies = [
        { kind: 'cut-stream', chunks: ['half ', 'an '] },
        { kind: 'completion', content: 'whole answer' },
      ];
      const before = fake.requests.length;
      const deltas: string[] = [];
      const retries: [number, string][] = [];
      const result = await provider().complete({
        ...ask('x'),
        onDelta: (t) => void deltas.push(t),
        onRetry: (attempt, error) => {
          retries.push([attempt, error.kind]);
          deltas.length = 0;
        },
      });
      expect(fake.requests.length - before).toBe(2);
      expect(retries).toEqual([[2, 'provider_error']]);
      expect(deltas.join('')).toBe('whole answer');
      expect(result.content).toBe('whole answer');
    });

    it('a stream that stalls past timeout_seconds is retried, and the last failure says the answer did not end in time', async () => {
      fake.replies = [
        { kind: 'stalled-stream', chunks: ['slow '] },
        { kind: 'completion', content: 'made it' },
      ];
      const before = fake.requests.length;
      const result = await provider().complete({ ...ask('x'), timeoutMs: 300, onDelta: () => {}, onRetry: () => {} });
      expect(fake.requests.length - before).toBe(2);
      expect(result.content).toBe('made it');

      fake.replies = [
        { kind: 'stalled-stream', chunks: ['a '] },
        { kind: 'stalled-stream', chunks: ['b '] },
      ];
      const error = await provider()
        .complete({
          ...ask('x'),
          timeoutMs: 300,
          retry: { maxAttempts: 2, backoffMs: 1 },
          onDelta: () => {},
          onRetry: () => {},
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        kind: 'provider_timeout',
        message: expect.stringContaining('streamed answer did not end within 0.3 s'),
      });
    });

    it('a caller that cannot void chunks it has (no onRetry: the gateway) gets the broken stream as the failure, not a retry', async () => {
      fake.replies = [{ kind: 'cut-stream', chunks: ['half '] }];
      const before = fake.requests.length;
      const error = await provider()
        .complete({ ...ask('x'), onDelta: () => {} })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect(fake.requests.length - before).toBe(1);
    });

    it('without onDelta the request is not streamed (stream: false)', async () => {
      await provider().complete(ask('x'));
      expect(fake.requests.at(-1)).toMatchObject({ stream: false });
    });

    it('hands on the next chunk only once the promise onDelta returned settled (a caller that is behind)', async () => {
      for (const [name, complete] of [
        [
          'echo',
          (onDelta: (t: string) => Promise<void>) =>
            createModelRouter({}).complete({
              model: 'echo',
              messages: [{ role: 'user', content: 'one two three' }],
              onDelta,
            }),
        ],
        [
          'a provider stream',
          (onDelta: (t: string) => Promise<void>) => {
            fake.replies = [{ kind: 'completion', content: 'one two three' }];
            return provider().complete({ ...ask('x'), onDelta });
          },
        ],
      ] as const) {
        const deltas: string[] = [];
        const seenWhileHeld: number[] = [];
        const result = await complete(async (t) => {
          deltas.push(t);
          await new Promise((resolve) => setTimeout(resolve, 10));
          seenWhileHeld.push(deltas.length);
        });
        expect(result.content, name).toBe('one two three');
        expect(seenWhileHeld, name).toEqual([1, 2, 3]);
      }
    });

    it('echo streams word by word', async () => {
      const deltas: string[] = [];
      const result = await createModelRouter({}).complete({
        model: 'echo',
        messages: [{ role: 'user', content: 'hello  there world' }],
        onDelta: (t) => void deltas.push(t),
      });
      expect(deltas.join('')).toBe(result.content);
      expect(deltas).toEqual(['hello  ', 'there ', 'world']);
    });
  });

  it("prices calls at the table (the service's own models free) and keeps metrics labels bounded", async () => {
    const parsed = parsePriceTable('{"gpt-priced": {"input": 1, "output": 2}}');
    const table = 'table' in parsed ? parsed.table : null;
    const listed = createModelRouter({
      MODEL_PROVIDER_BASE_URL: fake.baseUrl,
      MODEL_PROVIDER_MODELS: ['llama-3', 'gpt-priced'],
      MODEL_PRICES: table,
    });
    const usage = { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 };
    expect(listed.cost('gpt-priced', usage)).toEqual({ currency: 'USD', input: 3000, output: 2000 });
    expect(listed.cost('llama-3', usage)).toBeNull();
    expect(listed.cost('echo', usage)).toEqual({ currency: 'USD', input: 0, output: 0 });
    expect(['gpt-priced', 'llama-3', 'echo', 'made-up'].map((m) => listed.metricsLabel(m))).toEqual([
      'gpt-priced',
      'llama-3',
      'echo',
      'other',
    ]);
    // Every model routed to the provider: names a workflow makes up are "other" unless priced.
    const open = createModelRouter({ MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PRICES: table });
    expect(['gpt-priced', 'anything-at-all'].map((m) => open.metricsLabel(m))).toEqual(['gpt-priced', 'other']);
    expect(createModelRouter({}).cost('echo', usage)).toBeNull();
  });

  it('reads the cached prompt tokens OpenAI reports (prompt_tokens_details.cached_tokens)', async () => {
    const provider = openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'] });
    fake.replies = [{ kind: 'completion', content: 'a b', cachedTokens: 2 }];
    const result = await provider.complete(ask('one two three'));
    expect(result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, cached_tokens: 2 });
    fake.replies = [{ kind: 'completion', content: 'a b' }];
    expect((await provider.complete(ask('one two three'))).usage).not.toHaveProperty('cached_tokens');
  });
});
