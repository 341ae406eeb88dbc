import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderError, type ChatRequest, type ChatResult, type ModelProvider } from './types.ts';

export interface OpenAICompatibleOptions {
  baseUrl: string;
  apiKey?: string;
  /** Model names routed here; `*` routes every model no other provider serves. */
  models: string[];
  timeoutMs?: number;
  maxAttempts?: number;
  /** First backoff delay; doubles per attempt, with jitter. */
  backoffMs?: number;
}

const retryable = (status: number) => status === 429 || status >= 500;

function retryDelay(attempt: number, backoffMs: number, retryAfter: string | null): number {
  const seconds = retryAfter === null ? NaN : Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 30_000);
  return backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random());
}

interface CompletionBody {
  model?: string;
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
  error?: { message?: string };
}

/** Any OpenAI-compatible chat completions API (vLLM, Ollama, llama.cpp server, hosted APIs). */
export function openAICompatibleProvider(options: OpenAICompatibleOptions): ModelProvider {
  const url = options.baseUrl.replace(/\/+$/, '') + '/chat/completions';
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const backoffMs = options.backoffMs ?? 250;
  const all = options.models.includes('*');

  async function attempt(request: ChatRequest): Promise<Response> {
    const signals = [AbortSignal.timeout(request.timeoutMs ?? timeoutMs), ...(request.signal ? [request.signal] : [])];
    return fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: request.model,
        messages: request.messages,
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
        stream: false,
      }),
      signal: AbortSignal.any(signals),
    });
  }

  return {
    name: 'openai-compatible',
    serves: (model) => all || options.models.includes(model),
    async complete(request) {
      let lastError: ProviderError | undefined;
      const attempts = request.retry?.maxAttempts ?? maxAttempts;
      const backoff = request.retry?.backoffMs ?? backoffMs;
      const limitMs = request.timeoutMs ?? timeoutMs;
      for (let n = 1; n <= attempts; n++) {
        let response: Response;
        let body: CompletionBody | undefined;
        try {
          response = await attempt(request);
          body = (await response.json().catch(() => undefined)) as CompletionBody | undefined;
        } catch (err) {
          if (request.signal?.aborted) throw request.signal.reason ?? err;
          const timedOut = (err as Error).name === 'TimeoutError';
          lastError = timedOut
            ? new ProviderError(`The model provider did not answer within ${limitMs / 1000} s.`, undefined, 'provider_timeout')
            : new ProviderError(`The model provider could not be reached: ${(err as Error).message}`, undefined, 'provider_timeout');
          if (n < attempts) await sleep(retryDelay(n, backoff, null), undefined, { signal: request.signal });
          continue;
        }
        if (response.ok) return toResult(request.model, body);
        lastError = new ProviderError(
          `The model provider answered ${response.status}: ${body?.error?.message ?? response.statusText}`,
          response.status,
        );
        if (!retryable(response.status) || n === attempts) break;
        await sleep(retryDelay(n, backoff, response.headers.get('retry-after')), undefined, { signal: request.signal });
      }
      throw lastError ?? new ProviderError('The model provider failed.');
    },
  };
}

function toResult(model: string, body: CompletionBody | undefined): ChatResult {
  if (typeof body !== 'object' || body === null) throw new ProviderError('The model provider answered with something that is not JSON.', undefined, 'provider_bad_response');
  const choice = body.choices?.[0];
  const content = choice?.message?.content;
  if (typeof content !== 'string') throw new ProviderError('The model provider answered without a message.', undefined, 'provider_bad_response');
  const prompt = body.usage?.prompt_tokens ?? 0;
  const completion = body.usage?.completion_tokens ?? 0;
  return {
    model: body.model ?? model,
    content,
    finishReason: choice?.finish_reason ?? null,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: body.usage?.total_tokens ?? prompt + completion },
  };
}
