import { setTimeout as sleep } from 'node:timers/promises';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import {
  addedUsage,
  ProviderError,
  type ChatRequest,
  type ChatResult,
  type ModelProvider,
  type Usage,
} from './types.ts';
import { ToolCallPieces, detailsOf, providerErrorOf, type ProviderErrorBody, type ToolCallPiece } from './toolCalls.ts';

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
  choices?: { message?: { content?: string | null; tool_calls?: unknown }; finish_reason?: string | null }[];
  usage?: WireUsage;
  error?: ProviderErrorBody;
}

/** OpenAI's `usage`; `prompt_tokens_details.cached_tokens`: of the prompt's tokens, those served from its cache. */
interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** One `data:` line of a streamed completion (OpenAI's `chat.completion.chunk`). */
interface CompletionChunk {
  model?: string;
  choices?: { delta?: { content?: string | null; tool_calls?: ToolCallPiece[] }; finish_reason?: string | null }[];
  /** With `stream_options.include_usage`: on the last chunk (whose `choices` is empty), null before. */
  usage?: WireUsage | null;
  error?: ProviderErrorBody;
}

/** One POST of `request` to the chat completions endpoint `url`, ended after `timeoutMs` or by the caller's signal. */
function postCompletion(
  url: string,
  apiKey: string | undefined,
  request: ChatRequest,
  timeoutMs: number,
): Promise<Response> {
  const signals = [AbortSignal.timeout(timeoutMs), ...(request.signal ? [request.signal] : [])];
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: request.model,
      messages: request.messages,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
      ...(request.response_format !== undefined ? { response_format: request.response_format } : {}),
      ...(request.tools !== undefined ? { tools: request.tools } : {}),
      ...(request.tool_choice !== undefined ? { tool_choice: request.tool_choice } : {}),
      ...(request.parallel_tool_calls !== undefined ? { parallel_tool_calls: request.parallel_tool_calls } : {}),
      // Streamed when the caller takes chunks: usage then comes on the last chunk.
      ...(request.onDelta ? { stream: true, stream_options: { include_usage: true } } : { stream: false }),
    }),
    signal: AbortSignal.any(signals),
  });
}

/** Any OpenAI-compatible chat completions API (vLLM, Ollama, llama.cpp server, hosted APIs). */
export function openAICompatibleProvider(options: OpenAICompatibleOptions): ModelProvider {
  const url = options.baseUrl.replace(/\/+$/, '') + '/chat/completions';
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const backoffMs = options.backoffMs ?? 250;
  const all = options.models.includes('*');

  return {
    name: 'openai-compatible',
    serves: (model) => all || options.models.includes(model),
    async complete(request) {
      let lastError: ProviderError | undefined;
      // The tokens of the attempts that failed after their answer said what it used: paid for, so counted.
      let spent: Usage | undefined;
      const counted = (err: ProviderError) => {
        if (err.usage) spent = spent ? addedUsage(spent, err.usage) : err.usage;
        return spending(err);
      };
      // The error the call ends with carries every failed attempt's tokens.
      const spending = (err: ProviderError) => {
        if (spent) err.usage = spent;
        return err;
      };
      const attempts = request.retry?.maxAttempts ?? maxAttempts;
      const backoff = request.retry?.backoffMs ?? backoffMs;
      const limitMs = request.timeoutMs ?? timeoutMs;
      for (let n = 1; n <= attempts; n++) {
        request.onAttempt?.(n);
        let response: Response;
        let body: CompletionBody | undefined;
        let streamed = false;
        try {
          response = await postCompletion(url, options.apiKey, request, limitMs);
          // A provider may answer a streamed request with one JSON completion: taken as it is.
          // A stream that breaks off, times out or streams an error is retried like any failure:
          // the caller is told its chunks are void (onRetry) before the next attempt.
          if (response.ok && request.onDelta && isEventStream(response))
            return withSpent(
              spent,
              await readStream(
                response,
                {
                  ...request,
                  onDelta: (t) => ((streamed = true), request.onDelta!(t)),
                  ...(request.onToolCallDelta
                    ? { onToolCallDelta: (p) => ((streamed = true), request.onToolCallDelta!(p)) }
                    : {}),
                },
                limitMs,
              ),
            );
          body = (await response.json().catch(() => undefined)) as CompletionBody | undefined;
        } catch (err) {
          if (err instanceof ProviderError) counted(err);
          if (request.signal?.aborted) throw request.signal.reason ?? err;
          // Final: an unusable answer, or chunks out to a caller that cannot void them (the gateway's client).
          if (err instanceof ProviderError && (err.kind === 'provider_bad_response' || (streamed && !request.onRetry)))
            throw err;
          lastError = err instanceof ProviderError ? err : unreachable(err, limitMs);
          if (n < attempts) await retryAfterDelay(request, n, lastError, retryDelay(n, backoff, null));
          continue;
        }
        if (response.ok) {
          let result: ChatResult;
          try {
            result = withSpent(spent, toResult(request.model, body));
          } catch (err) {
            throw err instanceof ProviderError ? counted(err) : err;
          }
          await request.onDelta?.(result.content);
          return result;
        }
        lastError = providerErrorOf(response, body?.error);
        if (!retryable(response.status) || n === attempts) break;
        await retryAfterDelay(request, n, lastError, retryDelay(n, backoff, response.headers.get('retry-after')));
      }
      throw spending(lastError ?? new ProviderError('The model provider failed.'));
    },
  };
}

/** A result with the tokens of the attempts before it that failed after reporting theirs. */
const withSpent = (spent: Usage | undefined, result: ChatResult): ChatResult =>
  spent ? { ...result, usage: addedUsage(spent, result.usage) } : result;

/** Tells the caller the next attempt is coming (and after how long) as soon as it is decided, then waits. */
async function retryAfterDelay(request: ChatRequest, failed: number, error: ProviderError, delayMs: number) {
  request.onRetry?.(failed + 1, error, Math.round(delayMs));
  await sleep(delayMs, undefined, { signal: request.signal });
}

const isEventStream = (response: Response) =>
  (response.headers.get('content-type') ?? '').startsWith('text/event-stream');

/** A call that got no answer: the attempt's time ran out, or the provider could not be reached. */
function unreachable(err: unknown, limitMs: number): ProviderError {
  return (err as Error).name === 'TimeoutError'
    ? new ProviderError(`The model provider did not answer within ${limitMs / 1000} s.`, undefined, 'provider_timeout')
    : new ProviderError(
        `The model provider could not be reached: ${(err as Error).message}`,
        undefined,
        'provider_timeout',
      );
}

const usageOf = (usage: WireUsage | null | undefined): Usage => {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.total_tokens ?? prompt + completion,
    // Kept only when the provider reports some: it is priced apart (cached_input).
    ...(typeof cached === 'number' && Number.isInteger(cached) && cached > 0
      ? { cached_tokens: Math.min(cached, prompt) }
      : {}),
  };
};

/**
 * A streamed completion (OpenAI's wire format): `data: {chat.completion.chunk}` events, each
 * content delta handed to `onDelta` as it comes, usage from the last chunk, then `data: [DONE]`.
 */
async function readStream(response: Response, request: ChatRequest, limitMs: number): Promise<ChatResult> {
  let content = '';
  let model = request.model;
  let finishReason: string | null = null;
  let usage: CompletionChunk['usage'] = null;
  const calls = new ToolCallPieces();
  const ended = (): ChatResult => ({ model, content, finishReason, usage: usageOf(usage), ...calls.result() });
  const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  try {
    for await (const event of events) {
      if (event.data === '[DONE]') return ended();
      let chunk: CompletionChunk;
      try {
        chunk = JSON.parse(event.data) as CompletionChunk;
      } catch {
        throw new ProviderError(
          'The model provider streamed something that is not JSON.',
          undefined,
          'provider_bad_response',
        );
      }
      if (chunk.error)
        throw new ProviderError(
          `The model provider failed while streaming: ${chunk.error.message ?? 'unknown error'}`,
          undefined,
          undefined,
          null,
          detailsOf(response, chunk.error),
        );
      model = chunk.model ?? model;
      usage = chunk.usage ?? usage;
      const choice = chunk.choices?.[0];
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      const pieces = calls.add(choice?.delta?.tool_calls);
      if (pieces.length > 0) {
        const behind = request.onToolCallDelta?.(pieces);
        if (behind) await behind;
      }
      const text = choice?.delta?.content;
      if (typeof text === 'string' && text !== '') {
        content += text;
        // Awaited: while the caller is behind, no more is read from the provider (TCP holds it there).
        const behind = request.onDelta?.(text);
        if (behind) await behind;
      }
    }
  } catch (err) {
    if (err instanceof ProviderError) {
      if (usage) err.usage = usageOf(usage);
      throw err;
    }
    if (request.signal?.aborted) throw request.signal.reason ?? err;
    // It answered, then stalled or dropped: say so, not that it did not answer.
    throw (err as Error).name === 'TimeoutError'
      ? new ProviderError(
          `The model provider's streamed answer did not end within ${limitMs / 1000} s (timeout_seconds bounds each attempt, streaming included).`,
          undefined,
          'provider_timeout',
        )
      : new ProviderError(
          `The model provider's stream broke off: ${(err as Error).message}`,
          undefined,
          'provider_error',
        );
  }
  // Some servers close without `[DONE]`: a stream that said how it finished is whole.
  if (finishReason !== null) return ended();
  const cut = new ProviderError(
    "The model provider's stream ended before the answer did.",
    undefined,
    'provider_error',
  );
  if (usage) cut.usage = usageOf(usage);
  throw cut;
}

function toResult(model: string, body: CompletionBody | undefined): ChatResult {
  if (typeof body !== 'object' || body === null)
    throw new ProviderError(
      'The model provider answered with something that is not JSON.',
      undefined,
      'provider_bad_response',
    );
  const choice = body.choices?.[0];
  const content = choice?.message?.content;
  const calls = new ToolCallPieces();
  calls.addWhole(choice?.message?.tool_calls);
  const { toolCalls } = calls.result();
  // A message with tool calls may have no text (OpenAI sends null): the calls are the answer.
  if (typeof content !== 'string' && !toolCalls) {
    const failure = new ProviderError(
      'The model provider answered without a message.',
      undefined,
      'provider_bad_response',
    );
    if (body.usage) failure.usage = usageOf(body.usage);
    throw failure;
  }
  return {
    model: body.model ?? model,
    content: typeof content === 'string' ? content : '',
    finishReason: choice?.finish_reason ?? null,
    usage: usageOf(body.usage),
    ...(toolCalls ? { toolCalls } : {}),
  };
}
