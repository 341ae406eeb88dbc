import { setTimeout as sleep } from 'node:timers/promises';
import { countWords, echoProvider } from './echo.ts';
import { ProviderError, type ChatRequest, type ChatResult, type ModelProvider } from './types.ts';

// Demo models, built in so that a run's live view, a failure, a node's retry and a cancel can be
// seen with no model provider at all. They are `echo` with a twist, say so in their names and
// errors, and are served only when DEMO_MODELS is on (by default everywhere but production).

/** `echo-slow` streams its answer over about this long, whatever its length (a cancel has time to land). */
const SLOW_TOTAL_MS = 3000;
const SLOW_STEP_MS = { min: 20, max: 500 };

/** `echo-fail` fails every attempt; `echo-fail-N` fails the first N attempts of each call, then echoes (src/shared/demoModels.ts names them). */
const FAIL = /^echo-fail(?:-([1-3]))?$/;

const lastUserWords = (request: ChatRequest) =>
  countWords([...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

/** `echo`, its words spread over about three seconds; a non-streaming call waits as long, then answers. */
async function completeSlowly(request: ChatRequest): Promise<ChatResult> {
  const words = Math.max(1, lastUserWords(request));
  const step = Math.min(SLOW_STEP_MS.max, Math.max(SLOW_STEP_MS.min, SLOW_TOTAL_MS / words));
  const onDelta = request.onDelta;
  if (!onDelta) await sleep(SLOW_TOTAL_MS, undefined, { signal: request.signal });
  const result = await echoProvider.complete({
    ...request,
    ...(onDelta
      ? {
          onDelta: async (piece: string) => {
            await sleep(step, undefined, { signal: request.signal });
            await onDelta(piece);
          },
        }
      : {}),
  });
  return { ...result, model: 'echo-slow' };
}

/** Fails `failures` attempts (every one when undefined), retried as the node's `retry` says, then echoes. */
async function completeAfterFailures(request: ChatRequest, failures: number | undefined): Promise<ChatResult> {
  const attempts = request.retry?.maxAttempts ?? 3;
  const backoffMs = request.retry?.backoffMs ?? 250;
  for (let n = 1; n <= attempts; n++) {
    request.signal?.throwIfAborted();
    request.onAttempt?.(n);
    // The answering attempt is this one, not echo's first.
    if (failures !== undefined && n > failures)
      return { ...(await echoProvider.complete({ ...request, onAttempt: undefined })), model: request.model };
    if (n < attempts) {
      const delayMs = backoffMs * 2 ** (n - 1);
      request.onRetry?.(n + 1, new ProviderError(`The demo model ${request.model} failed on purpose.`, 500), delayMs);
      await sleep(delayMs, undefined, { signal: request.signal });
    }
  }
  throw new ProviderError(
    `The demo model ${request.model} failed on purpose (${attempts} of ${attempts} attempts failed).`,
    503,
    'provider_error',
  );
}

export const demoProvider: ModelProvider = {
  name: 'demo',
  inProcess: true,
  serves: (model) => model === 'echo-slow' || FAIL.test(model),
  complete(request) {
    if (request.model === 'echo-slow') return completeSlowly(request);
    const n = FAIL.exec(request.model)![1];
    return completeAfterFailures(request, n === undefined ? undefined : Number(n));
  },
};
