/** One call of a tool the model asked for, in OpenAI's wire format (`arguments` is JSON text, as the model wrote it). */
export interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/** A piece of a streamed tool call, as passed on (only the fields OpenAI defines, each checked). */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** A message in OpenAI's wire format: a `tool` message answers a call; an assistant's may carry its `tool_calls`. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  /** OpenAI's `response_format` (an llm_call's), passed on as it is: the caller parses the answer. */
  response_format?: Record<string, unknown>;
  /** OpenAI's `tools`, `tool_choice` and `parallel_tool_calls` (the gateway's caller's), passed on as they are. */
  tools?: unknown[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  /** Aborts the call (run cancelled, run timed out, client gone). */
  signal?: AbortSignal;
  /** Attempts and first backoff for this call (an llm_call node's `retry`); the provider's defaults otherwise. */
  retry?: { maxAttempts: number; backoffMs: number };
  /** Limit of each attempt (an llm_call node's `timeout_seconds`); the provider's default otherwise. */
  timeoutMs?: number;
  /**
   * Asks for the answer streamed (`stream: true`): called with each chunk of text as it arrives.
   * A provider that cannot stream calls it once with the whole text. An attempt that fails after
   * some chunks is retried like any other (a stream that broke off once went unretried)
   * when the caller takes `onRetry`, which tells it its chunks so far are void; without it (the
   * gateway, whose client cannot void them), it is not. A promise returned holds the next
   * chunk until it settles: a caller that is behind (a slow streaming client) slows the provider's
   * stream down instead of piling its chunks up in memory.
   */
  onDelta?: (text: string) => void | Promise<void>;
  /**
   * With `onDelta`: called with each streamed piece of the model's tool calls as it arrives (OpenAI's
   * `delta.tool_calls`: `index`, then `id`, `type` and name first, `function.arguments` in pieces),
   * so a gateway client sees them as they come. Pieces out count as chunks out (see onDelta's retry).
   */
  onToolCallDelta?: (pieces: ToolCallDelta[]) => void | Promise<void>;
  /** Called as each attempt of the call begins (1, then 2 for the first retry, ...): a run step's `attempts`. */
  onAttempt?: (attempt: number) => void;
  /**
   * Called once a retry is decided, before its wait: the attempt to come (2, 3, ...), why the
   * previous one failed, and the wait in milliseconds. What the failed attempt streamed is void.
   */
  onRetry?: (attempt: number, error: ProviderError, delayMs: number) => void;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of `prompt_tokens`, those the provider served from its prompt cache; absent when it reported none. */
  cached_tokens?: number;
}

/** Two usages summed (a step's attempts or iterations, a run's steps); `cached_tokens` only when some were. */
export function addedUsage(a: Usage, b: Usage): Usage {
  const cached = (a.cached_tokens ?? 0) + (b.cached_tokens ?? 0);
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    ...(cached > 0 ? { cached_tokens: cached } : {}),
  };
}

export interface ChatResult {
  model: string;
  /** The text; '' when the model answered with tool calls only. */
  content: string;
  finishReason: string | null;
  usage: Usage;
  /** The tools the model asked to call (a streamed answer's pieces put together), when it did. */
  toolCalls?: ToolCall[];
}

export interface ModelProvider {
  readonly name: string;
  /** Answers in this process, calling nothing outside it (`echo`). */
  readonly inProcess?: boolean;
  serves(model: string): boolean;
  complete(request: ChatRequest): Promise<ChatResult>;
}

/** No provider serves the model. */
export class ModelUnavailableError extends Error {
  readonly model: string;
  constructor(model: string) {
    super(`No provider serves the model "${model}".`);
    this.model = model;
  }
}

/** How a provider failed; also the run error `code` of a node that failed so. */
export type ProviderFailure = 'rate_limited' | 'provider_timeout' | 'provider_bad_response' | 'provider_error';

/** What a provider's error answer said of itself: its error's `code` and `type`, its `x-request-id`. */
export interface ProviderErrorDetails {
  code?: string | null;
  type?: string | null;
  requestId?: string;
}

/** The provider failed (after retries), or answered something that is not a completion. */
export class ProviderError extends Error {
  readonly status: number | undefined;
  readonly kind: ProviderFailure;
  /** The provider's `Retry-After` on its last answer, as sent. */
  readonly retryAfter: string | null;
  /** Kept so that whoever reads the failure can quote it to the provider's support. */
  readonly details: ProviderErrorDetails;
  /** The tokens the failed call's answers reported (an answer that was unusable, a stream that broke after its usage): they were paid for. */
  usage?: Usage;
  constructor(
    message: string,
    status?: number,
    kind?: ProviderFailure,
    retryAfter?: string | null,
    details: ProviderErrorDetails = {},
  ) {
    super(message);
    this.status = status;
    this.kind = kind ?? (status === 429 ? 'rate_limited' : 'provider_error');
    this.retryAfter = retryAfter ?? null;
    this.details = details;
  }
}
