import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { principalOf } from '../http/principal.ts';
import { startEventStream, writeFrame } from '../shared/sseStream.ts';
import {
  maxTokensTooLarge,
  modelNotFound,
  providerRateLimited,
  upstreamError,
  upstreamErrorOf,
  type OpenAIError,
} from '../shared/errors.ts';
import { messagesOf, toolOptionsOf } from './toolRequests.ts';
import {
  ModelUnavailableError,
  ProviderError,
  type ChatResult,
  type ModelRouter,
  type ToolCallDelta,
} from '../runs/providers/index.ts';

type ChatCompletionRequest = components['schemas']['ChatCompletionRequest'];
type ChatCompletion = components['schemas']['ChatCompletion'];

/**
 * `chatcmpl-` and 24 hex digits of a v4 UUID (22 of them random: 88 bits). From randomUUID, which draws on a batch of entropy it refills every 128
 * ids: randomBytes(12) read fresh entropy on every completion, 4% of the gateway's CPU.
 */
const completionId = () => `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`;

function toCompletion(result: ChatResult): ChatCompletion {
  return {
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: result.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: result.content,
          ...(result.toolCalls ? { tool_calls: result.toolCalls } : {}),
        },
        finish_reason: result.finishReason,
      },
    ],
    usage: result.usage,
  };
}

/**
 * A streamed answer in OpenAI's wire format (`stream: true`): `data: {chat.completion.chunk}`
 * events, the first with the role, one per piece of text, one with finish_reason, one with the
 * usage when `stream_options.include_usage` asks (its `choices` empty), then `data: [DONE]`. The
 * status line waits for the first piece, so a provider that fails before it still gets its
 * status (429, 502) and JSON error; a failure after it is an `error` event, as OpenAI sends.
 */
class ChunkStream {
  private readonly id = completionId();
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly res: Response;
  private readonly model: string;
  private readonly includeUsage: boolean;
  private toolCallsSent = false;

  constructor(res: Response, model: string, includeUsage: boolean) {
    this.res = res;
    this.model = model;
    this.includeUsage = includeUsage;
  }

  get started(): boolean {
    return this.res.headersSent;
  }

  /** A promise when the caller is behind: the provider's next piece waits for it (sseStream.ts). */
  delta(text: string): Promise<void> | undefined {
    this.start();
    return this.send(this.chunk({ content: text }, null));
  }

  /** Pieces of the model's tool calls, passed on as the provider streams them. */
  toolCallDelta(pieces: ToolCallDelta[]): Promise<void> | undefined {
    this.start();
    this.toolCallsSent = true;
    return this.send(this.chunk({ tool_calls: pieces }, null));
  }

  // The last frames (two or three) are written without waiting: the answer ends with them.
  finish(result: ChatResult): void {
    this.start();
    // A provider that answered whole: each call as OpenAI streams one, its name, then its arguments.
    if (!this.toolCallsSent)
      result.toolCalls?.forEach((call, index) => {
        const named = { index, id: call.id, type: call.type, function: { name: call.function.name, arguments: '' } };
        void this.send(this.chunk({ tool_calls: [named] }, null));
        void this.send(this.chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }, null));
      });
    void this.send(this.chunk({}, result.finishReason));
    if (this.includeUsage) void this.send({ ...this.chunk({}, null), choices: [], usage: result.usage });
    this.res.end('data: [DONE]\n\n');
  }

  fail(error: OpenAIError): void {
    void this.send(error.body());
    this.res.end();
  }

  private start(): void {
    if (this.res.headersSent) return;
    startEventStream(this.res);
    // Not waited for: were the socket behind, the first delta's write waits for the same 'drain'.
    void this.send(this.chunk({ role: 'assistant', content: '' }, null));
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null) {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
    };
  }

  private send(data: unknown): Promise<void> | undefined {
    return writeFrame(this.res, `data: ${JSON.stringify(data)}\n\n`);
  }
}

/**
 * POST /serverless/v1/chat/completions: an OpenAI-compatible completion through the model
 * providers, for a proxy token or a raw access token (the security handlers established which),
 * whole or streamed (`stream: true`). Usage is attributed to the raw access token: logged with
 * its id and usage_scenario, never a token.
 */
export function createChatCompletion(ctx: AppContext, models: ModelRouter): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'proxy', 'apiKey');
    const body = req.body as ChatCompletionRequest;
    if (!models.has(body.model)) throw modelNotFound(body.model);
    const messages = messagesOf(body);
    const toolOptions = toolOptionsOf(body);
    // The same ceiling as an llm_call node's max_tokens: one operator setting bounds what any caller asks a provider for.
    if (body.max_tokens !== undefined && body.max_tokens > ctx.config.WORKFLOW_MAX_TOKENS_LIMIT) {
      throw maxTokensTooLarge(body.max_tokens, ctx.config.WORKFLOW_MAX_TOKENS_LIMIT);
    }

    // The caller hanging up cancels the provider call.
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const stream = body.stream
      ? new ChunkStream(res, body.model, body.stream_options?.include_usage === true)
      : undefined;
    const started = Date.now();
    let result: ChatResult;
    try {
      result = await models.complete({
        model: body.model,
        messages,
        ...toolOptions,
        ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
        ...(stream
          ? {
              onDelta: (text: string) => stream.delta(text),
              onToolCallDelta: (pieces: ToolCallDelta[]) => stream.toolCallDelta(pieces),
            }
          : {}),
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) return; // the caller left: no one to answer
      const failure = answerForModelFailure(err, body.model);
      if (err instanceof ProviderError)
        ctx.logger.warn(
          { err: { message: err.message, status: err.status }, model: body.model },
          'model provider failed',
        );
      if (stream?.started) {
        // The status line is out: the failure is the stream's last event.
        stream.fail(failure ?? upstreamError());
        if (!failure) ctx.logger.error({ err }, 'streamed completion failed');
        return;
      }
      throw failure ?? err;
    }

    ctx.logger.info(
      {
        serverless_usage: {
          access_token_id: principal.accessTokenId,
          user_id: principal.userId,
          namespace: principal.namespace,
          usage_scenario: principal.usageScenario,
          via: principal.kind === 'proxy' ? 'proxy_token' : 'api_key',
          ...(principal.kind === 'proxy' ? { client_id: principal.clientId, jti: principal.jti } : {}),
          model: result.model,
          ...result.usage,
          duration_ms: Date.now() - started,
          streamed: stream !== undefined,
        },
      },
      'serverless completion',
    );
    if (stream) stream.finish(result);
    else res.json(toCompletion(result));
  };
}

/** The error a caller gets for a model's failure; undefined for anything else (a bug: 500). */
function answerForModelFailure(err: unknown, model: string): OpenAIError | undefined {
  if (err instanceof ModelUnavailableError) return modelNotFound(model);
  if (!(err instanceof ProviderError)) return undefined;
  if (err.status === 429) return providerRateLimited(err.retryAfter);
  // Its status, code and request id, never its message (which may quote the prompt or its own internals):
  // enough for the caller to ask the provider, and only when they look like identifiers.
  const { code, requestId } = err.details;
  const token = (value: string | null | undefined) =>
    typeof value === 'string' && /^[\w.:-]{1,100}$/.test(value) ? value : undefined;
  return code != null || requestId !== undefined || err.status !== undefined
    ? upstreamErrorOf(err.status, token(code) ?? null, token(requestId))
    : upstreamError();
}
