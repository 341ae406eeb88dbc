// The OpenAI-compatible gateway: one call for a whole completion and one for a stream, so callers
// never narrow the 200's union of `application/json` and `text/event-stream`.
import type { ApiClient, Schemas } from './types.ts';
import { StreamError, type Result } from './result.ts';
import { readServerSentEvents } from './sse.ts';

export type ChatRequest = Omit<Schemas['ChatCompletionRequest'], 'stream' | 'stream_options'>;
const PATH = '/serverless/v1/chat/completions';

/** `POST /serverless/v1/chat/completions` without streaming: the whole `ChatCompletion`. */
export async function chatCompletion(
  api: ApiClient,
  body: ChatRequest,
  init: { signal?: AbortSignal } = {},
): Promise<Result<Schemas['ChatCompletion'], Schemas['OpenAIError']>> {
  const { data, error, response } = await api.POST(PATH, {
    body: { ...body, stream: false },
    parseAs: 'json',
    ...init,
  });
  if (error !== undefined) return { error, response };
  // stream: false is answered as application/json, the union's ChatCompletion member.
  return { data: data as Schemas['ChatCompletion'], response };
}

/**
 * `POST /serverless/v1/chat/completions` with `stream: true`: the `chat.completion.chunk`s as they
 * come (with `includeUsage`, a last chunk with `usage` and no `choices`). A failure before the first
 * chunk is the `error`; one after it throws a `StreamError` from the iteration.
 */
export async function streamChatCompletion(
  api: ApiClient,
  body: ChatRequest,
  init: { signal?: AbortSignal; includeUsage?: boolean } = {},
): Promise<Result<AsyncIterable<Schemas['ChatCompletionChunk']>, Schemas['OpenAIError']>> {
  const request = { ...body, stream: true, ...(init.includeUsage ? { stream_options: { include_usage: true } } : {}) };
  const { data, error, response } = await api.POST(PATH, {
    body: request,
    parseAs: 'stream',
    headers: { Accept: 'text/event-stream' },
    ...(init.signal ? { signal: init.signal } : {}),
  });
  if (error !== undefined) return { error, response };
  return { data: chunks(data as ReadableStream<Uint8Array>, init.signal), response };
}

async function* chunks(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<Schemas['ChatCompletionChunk']> {
  for await (const event of readServerSentEvents(body, signal)) {
    if (event.data === '[DONE]') return;
    const parsed = JSON.parse(event.data) as Schemas['ChatCompletionChunk'] | Schemas['OpenAIError'];
    if ('error' in parsed) throw new StreamError(parsed.error.message, parsed);
    yield parsed;
  }
  if (!signal?.aborted) throw new StreamError('The stream ended before [DONE].');
}
