import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { graphLimits } from '../../workflows/service.ts';
import { modelRouterFor } from '../machinery.ts';
import { demoProvider } from './demo.ts';
import { ProviderError } from './types.ts';

// The demo models: `echo` that streams slowly (a live view and a cancel can be watched) or fails
// (a failure and a node's retry can be seen), with no provider; off unless DEMO_MODELS is on.

const ask = (model: string, content: string, retry?: { maxAttempts: number; backoffMs: number }) => ({
  model,
  messages: [{ role: 'user' as const, content }],
  ...(retry ? { retry } : {}),
});

describe('demo models', () => {
  it('echo-slow streams the echo answer a word at a time, each piece after the one before', async () => {
    const pieces: { text: string; at: number }[] = [];
    const result = await demoProvider.complete({
      ...ask('echo-slow', 'one two three four'),
      onDelta: (text) => void pieces.push({ text, at: performance.now() }),
    });
    expect(result).toMatchObject({ model: 'echo-slow', content: 'one two three four', finishReason: 'stop' });
    expect(pieces.map((p) => p.text).join('')).toBe('one two three four');
    expect(pieces).toHaveLength(4);
    // Spread out, not delivered at once: every piece arrives later than the one before.
    for (let i = 1; i < pieces.length; i++) expect(pieces[i]!.at).toBeGreaterThan(pieces[i - 1]!.at);
  });

  it('echo-slow stops when its call is aborted (a cancelled run), before the rest of its words', async () => {
    const controller = new AbortController();
    const pieces: string[] = [];
    const call = demoProvider.complete({
      ...ask('echo-slow', 'a b c d e f g h i j'),
      signal: controller.signal,
      onDelta: (text) => {
        pieces.push(text);
        if (pieces.length === 2) controller.abort();
      },
    });
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(pieces).toHaveLength(2);
  });

  it('echo-fail fails every attempt with provider_error, saying it is a demo model failing on purpose', async () => {
    const call = demoProvider.complete(ask('echo-fail', 'hi', { maxAttempts: 2, backoffMs: 1 }));
    await expect(call).rejects.toBeInstanceOf(ProviderError);
    await expect(call).rejects.toMatchObject({
      kind: 'provider_error',
      message: 'The demo model echo-fail failed on purpose (2 of 2 attempts failed).',
    });
  });

  it('echo-fail-N fails the first N attempts of a call, then answers as echo: the node retry succeeds when it allows more', async () => {
    expect(
      await demoProvider.complete(ask('echo-fail-2', 'third time', { maxAttempts: 3, backoffMs: 1 })),
    ).toMatchObject({ model: 'echo-fail-2', content: 'third time' });
    await expect(
      demoProvider.complete(ask('echo-fail-2', 'x', { maxAttempts: 2, backoffMs: 1 })),
    ).rejects.toBeInstanceOf(ProviderError);
  });

  it('is served and accepted in a graph only with DEMO_MODELS: on by default in development, off in production unless enabled', () => {
    const production = { NODE_ENV: 'production', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') };
    const cases = [
      [{ NODE_ENV: 'development' }, true],
      [{ NODE_ENV: 'test' }, false],
      [production, false],
      [{ ...production, DEMO_MODELS: 'true' }, true],
    ] as const;
    for (const [env, on] of cases) {
      const config = loadConfig(env);
      expect([
        env.NODE_ENV,
        config.DEMO_MODELS,
        modelRouterFor(config).has('echo-slow'),
        graphLimits(config).models?.includes('echo-fail-2'),
      ]).toEqual([env.NODE_ENV, on, on, on]);
    }
  });
});
