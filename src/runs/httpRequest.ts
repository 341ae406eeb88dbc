// An http_request node at run time (openapi.yaml HttpRequestNode). Two steps, so the step's log
// shows what was sent without a secret in it: `prepare` renders the URL, headers and body with
// each `{{ secrets.NAME }}` left as a placeholder nobody can guess (a nonce per step, so a run
// input cannot smuggle one in), and describes the request with `{{ secrets.NAME }}` shown; `send`
// puts the values in, calls out through the outbound guard (src/outbound/) and parses the answer.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { OutboundError, outboundRequest, type OutboundPolicy, type OutboundResponse } from '../outbound/index.ts';
import { RunFailure } from '../shared/errors.ts';
import { secretRedactor } from './secretRedaction.ts';
import {
  bodyStrings,
  RESPONSE_HEADER_MAX_CHARS,
  RESPONSE_MAX_HEADERS,
  SECRET_REFERENCE,
  type HttpRequestConfig,
} from '../nodes/http_request/config.ts';

/** What a worker gives http_request nodes: the guard's policy, its bounds, the run owner's secrets. */
export interface HttpNodeDeps {
  policy: OutboundPolicy;
  /** WORKFLOW_HTTP_TIMEOUT_SECONDS: the default and the most a node's timeout_seconds gets. */
  maxTimeoutMs: number;
  /** WORKFLOW_HTTP_MAX_RESPONSE_BYTES. */
  maxBytes: number;
  /** The run owner's secrets of these names (a name they do not have is absent). */
  secrets(names: readonly string[]): Promise<Map<string, string>>;
}

export interface PreparedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Placeholder -> secret name. */
  placeholders: Map<string, string>;
}

/** Renders the request (secrets as placeholders) and describes it for the step's log, secrets by name. */
export async function prepare(
  config: HttpRequestConfig,
  render: (source: string) => Promise<string>,
): Promise<{ request: PreparedRequest; described: string }> {
  const nonce = randomBytes(12).toString('hex');
  const placeholders = new Map<string, string>();
  const withPlaceholders = (text: string) =>
    text.replace(SECRET_REFERENCE, (_all, name: string) => {
      const placeholder = `\u0000${nonce}:${name}\u0000`;
      placeholders.set(placeholder, name);
      return placeholder;
    });
  const method = config.method ?? 'GET';
  const url = await render(withPlaceholders(config.url));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {}))
    headers[name] = await render(withPlaceholders(value));
  let body: string | undefined;
  if (config.body !== undefined) {
    const rendered = structuredClone(config.body);
    for (const { pointer, text } of bodyStrings(config.body)) setAt(rendered, pointer, await render(text));
    body = JSON.stringify(rendered);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json';
  }
  const request = { method, url, headers, body, placeholders };
  return { request, described: describe(request) };
}

/** The request as the step's input shows it: method, URL, headers, body; each secret as `{{ secrets.NAME }}`. */
function describe(request: PreparedRequest): string {
  const shown = (text: string) => withNames(request, text);
  const lines = [
    `${request.method} ${shown(request.url)}`,
    ...Object.entries(request.headers).map(([k, v]) => `${k}: ${shown(v)}`),
  ];
  return request.body === undefined ? lines.join('\n') : `${lines.join('\n')}\n\n${request.body}`;
}

/** The text with each secret's placeholder shown as `{{ secrets.NAME }}`. */
function withNames(request: PreparedRequest, text: string): string {
  let out = text;
  for (const [placeholder, name] of request.placeholders) out = out.split(placeholder).join(`{{ secrets.${name} }}`);
  return out;
}

/** Sets the string at a JSON pointer of a value made by bodyStrings' walk. */
function setAt(root: unknown, pointer: string, value: string): void {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = keys.pop()!;
  const parent = keys.reduce<Record<string, unknown>>(
    (node, key) => node[key] as Record<string, unknown>,
    root as Record<string, unknown>,
  );
  parent[last] = value;
}

export interface SendOptions {
  timeoutSeconds?: number;
  retry?: { max_attempts?: number; backoff_seconds?: number };
  signal: AbortSignal;
  /** `response`: the output is `{status, headers, body}` (HttpRequestConfig.output). */
  output?: 'body' | 'response';
  /** Whether a final non-2xx fails; default: only with output `body`. */
  failOnStatus?: boolean;
  onAttempt(attempt: number): void;
  /** A retry decided: the attempt to come, why the last failed (secrets redacted), the wait before it. */
  onRetry?(attempt: number, error: { code: string; message: string }, delayMs: number): void;
}

const RETRIED_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Sends the prepared request with the owner's secrets in it; returns the body, parsed when its
 * type is JSON, and its text with every secret value shown as `[secret NAME]` (what the step logs).
 */
export async function send(
  deps: HttpNodeDeps,
  request: PreparedRequest,
  options: SendOptions,
): Promise<{ value: unknown; text: string }> {
  const values = await deps.secrets([...new Set(request.placeholders.values())]);
  const missing = [...new Set(request.placeholders.values())].filter((name) => !values.has(name));
  if (missing.length)
    throw new RunFailure(
      'secret_not_found',
      `No secret ${missing.join(', ')} (create it with PUT /api/secrets/${missing[0]}).`,
    );
  const fill = (text: string) => {
    let out = text;
    for (const [placeholder, name] of request.placeholders) out = out.split(placeholder).join(values.get(name)!);
    return out;
  };
  const redact = secretRedactor(values);
  const redactError = secretRedactor(values, { anyCase: true });
  // A URL that does not parse is named as written (secrets by name): the guard's message would quote
  // it cut at 200 characters, and a secret cut in two is no longer found by the redaction.
  if (!URL.canParse(fill(request.url)))
    throw new RunFailure(
      'http_invalid_url',
      `Not a URL: ${JSON.stringify(withNames(request, request.url).slice(0, 200))}.`,
    );
  const onRetry = options.onRetry;
  const told: SendOptions = {
    ...options,
    ...(onRetry
      ? { onRetry: (n, error, delayMs) => onRetry(n, { ...error, message: redactError(error.message) }, delayMs) }
      : {}),
  };
  const response = await withRetries(told, async (signal) =>
    outboundRequest(deps.policy, {
      method: request.method,
      url: fill(request.url),
      headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, fill(v)])),
      body: request.body,
      timeoutMs: Math.min((options.timeoutSeconds ?? Infinity) * 1000, deps.maxTimeoutMs),
      maxBytes: deps.maxBytes,
      signal,
    }),
  ).catch((err: unknown) => {
    if (err instanceof OutboundError) throw new RunFailure(err.code, redactError(err.message));
    throw err;
  });
  const text = redact(response.body.toString('utf8'));
  const ok = response.status >= 200 && response.status <= 299;
  const whole = options.output === 'response';
  if (!ok && (options.failOnStatus ?? !whole))
    throw new RunFailure('http_status', `The server answered ${response.status}: ${text.slice(0, 300)}`);
  if (!whole) return parsed(response, text);
  // A non-2xx body is often an HTML error page whatever its type says: kept as text, not a failure.
  const body = ok ? parsed(response, text).value : parsedOrText(response, text);
  return { value: { status: response.status, headers: shownHeaders(response, redact), body }, text };
}

/** The response's headers by lower-case name, bounded in number and length, secret values redacted. */
function shownHeaders(response: OutboundResponse, redact: (text: string) => string): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers).slice(0, RESPONSE_MAX_HEADERS)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : String(value);
    shown[name.toLowerCase()] = redact(joined).slice(0, RESPONSE_HEADER_MAX_CHARS);
  }
  return shown;
}

function parsedOrText(response: OutboundResponse, text: string): unknown {
  try {
    return parsed(response, text).value;
  } catch {
    return text;
  }
}

/** JSON (application/json, *+json) as its value, anything else as its text. */
function parsed(response: OutboundResponse, text: string): { value: unknown; text: string } {
  const type = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (!(type === 'application/json' || type.endsWith('+json')) || text.trim() === '') return { value: text, text };
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch {
    throw new RunFailure(
      'http_invalid_json',
      `The response says ${type} but its body is not JSON: ${text.slice(0, 200)}`,
    );
  }
}

/** Attempts as `retry` says: again after a connection failure, a timeout, or a 408, 429 or 5xx answer. */
async function withRetries(
  options: SendOptions,
  attempt: (signal: AbortSignal) => Promise<OutboundResponse>,
): Promise<OutboundResponse> {
  const attempts = options.retry?.max_attempts ?? 1;
  const backoffMs = (options.retry?.backoff_seconds ?? 0.5) * 1000;
  for (let n = 1; ; n++) {
    options.onAttempt(n);
    let retryAfter: string | undefined;
    let why: { code: string; message: string };
    try {
      const response = await attempt(options.signal);
      if (!RETRIED_STATUS(response.status) || n >= attempts) return response;
      retryAfter = [response.headers['retry-after']].flat()[0];
      why = { code: 'http_status', message: `The server answered ${response.status}.` };
    } catch (err) {
      const final = !(err instanceof OutboundError) || !['http_timeout', 'http_error'].includes(err.code);
      if (final || n >= attempts) throw err;
      why = { code: (err as OutboundError).code, message: (err as Error).message };
    }
    const seconds = Number(retryAfter);
    const delay =
      Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, 30_000) : backoffMs * 2 ** (n - 1);
    options.onRetry?.(n + 1, why, delay);
    await sleep(delay, undefined, { signal: options.signal });
  }
}

type HttpRequestNode = { id: string; config: HttpRequestConfig };

/** One run's http_request nodes: each one's request as rendered (`prepare`, its logged input), then sent. */
export class HttpNodes {
  private readonly prepared = new Map<string, PreparedRequest>();
  private readonly deps: HttpNodeDeps;
  constructor(deps: HttpNodeDeps) {
    this.deps = deps;
  }

  async prepare(node: HttpRequestNode, render: (source: string) => Promise<string>): Promise<string> {
    const { request, described } = await prepare(node.config, render);
    this.prepared.set(node.id, request);
    return described;
  }

  /** The node's output: the response's JSON value, or its text, or `{status, headers, body}` with output `response` (secret values redacted). */
  async send(
    node: HttpRequestNode,
    signal: AbortSignal,
    onAttempt: (attempt: number) => void,
    onRetry?: SendOptions['onRetry'],
  ): Promise<unknown> {
    const { retry, timeout_seconds: timeoutSeconds, output, fail_on_status: failOnStatus } = node.config;
    const options: SendOptions = {
      retry,
      timeoutSeconds,
      signal,
      onAttempt,
      ...(output ? { output } : {}),
      ...(failOnStatus === undefined ? {} : { failOnStatus }),
      ...(onRetry ? { onRetry } : {}),
    };
    return (await send(this.deps, this.prepared.get(node.id)!, options)).value;
  }
}
