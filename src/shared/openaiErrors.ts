// The OpenAI error shape of the serverless gateway (`{error: {message, type, param, code}}`), so
// OpenAI client libraries read our refusals as they read OpenAI's. Part of the catalogue that
// src/shared/errors.ts exports.

export class OpenAIError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    options: { type?: string; param?: string | null; code?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.type = options.type ?? 'invalid_request_error';
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const modelNotFound = (model: string) =>
  new OpenAIError(404, `The model '${model}' does not exist or you do not have access to it.`, {
    param: 'model',
    code: 'model_not_found',
  });
export const maxTokensTooLarge = (requested: number, limit: number) =>
  new OpenAIError(400, `max_tokens is too large: ${requested}. This service allows at most ${limit}.`, {
    param: 'max_tokens',
    code: 'invalid_value',
  });
export const upstreamError = () =>
  new OpenAIError(502, 'The model provider failed to answer.', { type: 'api_error', code: 'upstream_error' });
/** The model provider answered 429: passed on, with its Retry-After when it sent a valid one (RFC 9110 10.2.3). */
export const providerRateLimited = (retryAfter: string | null) => {
  const value = retryAfter?.trim() ?? '';
  const valid =
    /^\d{1,9}$/.test(value) ||
    (/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value) && !Number.isNaN(Date.parse(value)));
  return new OpenAIError(429, 'The model provider is rate limiting requests; retry later.', {
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    headers: valid ? { 'Retry-After': value } : {},
  });
};
export const gatewayUnavailable = () =>
  new OpenAIError(503, 'The service is temporarily unavailable.', {
    type: 'api_error',
    headers: { 'Retry-After': '5' },
  });
export const toolTooLarge = (index: number, size: number, limit: number) =>
  new OpenAIError(
    400,
    `tools[${index}] is too large: ${size} characters of JSON. This service allows at most ${limit} per tool.`,
    { param: 'tools', code: 'invalid_value' },
  );
/** A message without what its role needs (a user's text, a tool result's call id, an assistant's text or calls). */
export const invalidMessage = (index: number, why: string) =>
  new OpenAIError(400, `messages[${index}]: ${why}`, { param: 'messages', code: 'invalid_value' });
/** The provider's error answer, with what it said of itself, so the caller can quote it to the provider. */
export const upstreamErrorOf = (status: number | undefined, code: string | null, requestId: string | undefined) => {
  const said = [
    ...(status !== undefined ? [`it answered ${status}`] : []),
    ...(code ? [`code ${code}`] : []),
    ...(requestId ? [`request id ${requestId}`] : []),
  ];
  const detail = said.length > 0 ? ` (${said.join(', ')})` : '';
  return new OpenAIError(502, `The model provider failed to answer${detail}.`, {
    type: 'api_error',
    code: 'upstream_error',
  });
};
