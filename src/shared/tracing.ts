// What the engine knows of tracing: the @opentelemetry/api only, never the SDK (src/ops/tracing/
// starts it, when wanted). Without the SDK every call here meets the API's no-op tracer and
// propagator: no span is recorded, no context is carried, and a carrier stays empty.
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';

export const tracer = trace.getTracer('openauth-workflows');

/** Spans whose outcome their owner has set (a node's failure or wait): inSpan does not record it again. */
const told = new WeakSet<Span>();

/** Where the SDK's bootstrap leaves its shutdown (flushing the spans it still holds). */
export const SHUTDOWN_KEY = Symbol.for('openauth-workflows.tracing.shutdown');

/** Flushes and stops the SDK, when one runs; at most `timeoutMs`. */
export async function shutdownTracing(timeoutMs = 5000): Promise<void> {
  const shutdown = (globalThis as Record<symbol, unknown>)[SHUTDOWN_KEY] as (() => Promise<void>) | undefined;
  if (!shutdown) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    shutdown().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
}

/** A W3C trace context as carried in a job or a row: `traceparent`, and `tracestate` when there is one. */
export type TraceCarrier = Record<string, string>;

/** The active context as a carrier (empty without a span, or without the SDK). */
export function currentCarrier(): TraceCarrier {
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The context a carrier names, under the root: a span started in it continues that trace. */
export function contextOf(carrier: TraceCarrier | undefined): Context | undefined {
  if (!carrier?.traceparent) return undefined;
  const extracted = propagation.extract(ROOT_CONTEXT, carrier);
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/** A link to the span a carrier names (a run resumed or retried later points at its first trace). */
export function linkTo(carrier: TraceCarrier | undefined, attributes?: Attributes): Link[] {
  const ctx = contextOf(carrier);
  const spanContext = ctx && trace.getSpanContext(ctx);
  return spanContext ? [{ context: spanContext, ...(attributes ? { attributes } : {}) }] : [];
}

/** A span an earlier part of a run left (its creation's `traceparent`), and why a later span links to it. */
export interface TraceLink {
  traceparent: string;
  reason: 'resumed' | 'retry_of' | 'redelivered' | 'scheduled';
}

/** The active context's `traceparent`, as a run stores it (null without a span, or without the SDK). */
export function currentTraceparent(): string | null {
  return currentCarrier().traceparent ?? null;
}

/** The log fields of the active span, for pino's mixin: none outside a span (or without the SDK). */
export function logTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/**
 * Records a failure on a span (status ERROR, an exception event with the error's type and message:
 * the service's own messages, which never carry a secret), and its `error.type`.
 */
export function recordFailure(span: Span, err: unknown, type?: string): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException({ name: error.name, message: error.message });
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.setAttribute('error.type', type ?? ((err as { code?: unknown }).code as string | undefined) ?? error.name);
}

/** Runs `fn` in a new active span, ended when it settles (a failure recorded). */
export async function inSpan<T>(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; links?: Link[]; parent?: Context; root?: boolean },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links?.length ? { links: options.links } : {}),
      ...(options.root ? { root: true } : {}),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    // A span whose end its owner already told (a node's failure, a wait) is not failed again.
    if (span.isRecording() && !told.has(span)) recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export { SpanKind, SpanStatusCode, context, trace, ROOT_CONTEXT };
export type { Span, Context };

/** The attempt of the run being executed (1, 2 after a crash, ...), for the spans of its nodes. */
const RUN_ATTEMPT = Symbol.for('openauth-workflows.run.attempt');

/**
 * A run attempt's span (a worker's job): the first delivery continues the trace of the request
 * (or hook) that queued it; a later one (its worker died) is a new trace linked to that one,
 * whose spans have long ended. Its nodes' spans read `attempt` from it.
 */
export function inRunSpan<T>(
  runId: string,
  job: { carrier?: TraceCarrier | undefined; link?: TraceLink | undefined; retryCount: number },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const queuedIn = contextOf(job.carrier);
  const later = job.retryCount > 0;
  const parent = (later ? undefined : queuedIn) ?? ROOT_CONTEXT;
  // The run's first span (its creation), when this one is not in its trace: a run resumed or
  // retried by a later request, or redelivered after its worker died.
  const first =
    job.link ??
    (later && job.carrier?.traceparent
      ? { traceparent: job.carrier.traceparent, reason: 'redelivered' as const }
      : undefined);
  const links = first
    ? linkTo({ traceparent: first.traceparent }, { 'link.reason': later ? 'redelivered' : first.reason })
    : [];
  return inSpan(
    'run',
    { attributes: { 'run.id': runId, 'run.delivery': job.retryCount + 1 }, parent, ...(links.length ? { links } : {}) },
    fn,
  );
}

/** Runs `fn` with the run's attempt number where node spans read it. */
export function withRunAttempt<T>(attempt: number, fn: () => Promise<T>): Promise<T> {
  return context.with(context.active().setValue(RUN_ATTEMPT, attempt), fn);
}

/**
 * A node's span (`node <id>`): node.id, node.type, attempt, and its status when it ends
 * (`completed`, `failed`, `cancelled`, `waiting`). Ended as the node ends, so a batch processor
 * exports it then, not at the run's end. Sub-workflows, map items and tool calls run inside it.
 */
export function inNodeSpan<T>(
  node: { id: string; type: string },
  waiting: (err: unknown) => boolean,
  fn: () => Promise<T>,
): Promise<T> {
  const attempt = (context.active().getValue(RUN_ATTEMPT) as number | undefined) ?? 1;
  const attributes = { 'node.id': node.id, 'node.type': node.type, attempt };
  return inSpan(`node ${node.id}`, { attributes }, async (span) => {
    try {
      const out = await fn();
      if (!told.has(span)) span.setAttribute('status', 'completed');
      return out;
    } catch (err) {
      if (waiting(err)) {
        told.add(span);
        span.setAttribute('status', 'waiting');
      }
      throw err;
    }
  });
}

/** The active node's failure (also when its `on_error: continue` goes on): status and error recorded. */
export function nodeFailed(status: 'failed' | 'cancelled', err: unknown, code: string): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  told.add(span);
  span.setAttribute('status', status);
  recordFailure(span, err, code);
}

/** What a chat call's span reads of its request (structurally: src/runs/providers' ChatRequest). */
export interface TracedChatRequest<E extends ChatError = ChatError> {
  model: string;
  temperature?: number;
  max_tokens?: number;
  onDelta?: unknown;
  onAttempt?: (attempt: number) => void;
  onRetry?: (attempt: number, error: E, delayMs: number) => void;
}

/** What a chat call's span reads of a failed attempt's error. */
export type ChatError = Error & { kind?: string; status?: number | undefined };

/** What a chat call's span reads of its result. */
export interface TracedChatResult {
  model: string;
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number };
}

/**
 * A model provider call as GenAI client spans (`chat {model}`), one per attempt: a retried call
 * shows its failed attempts (error.type, status ERROR) beside the one that answered (response
 * model, finish reasons, tokens). Never the prompt, the answer, nor the provider's key.
 */
export async function tracedChat<E extends ChatError, R extends TracedChatRequest<E>, T extends TracedChatResult>(
  request: R,
  provider: string,
  call: (request: R) => Promise<T>,
): Promise<T> {
  const parent = context.active();
  const start = (attempt: number) =>
    tracer.startSpan(
      `chat ${request.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': provider,
          'gen_ai.system': provider,
          'gen_ai.request.model': request.model,
          ...(request.temperature !== undefined ? { 'gen_ai.request.temperature': request.temperature } : {}),
          ...(request.max_tokens !== undefined ? { 'gen_ai.request.max_tokens': request.max_tokens } : {}),
          attempt,
        },
      },
      parent,
    );
  let span: Span | undefined = start(1);
  const onRetry = (attempt: number, error: E, delayMs: number) => {
    if (span) {
      recordFailure(span, error, error.kind);
      if (error.status !== undefined) span.setAttribute('http.response.status_code', error.status);
      span.end();
      span = undefined;
    }
    request.onRetry?.(attempt, error, delayMs);
  };
  const traced: R = {
    ...request,
    onAttempt: (attempt: number) => {
      if (!span) span = start(attempt);
      request.onAttempt?.(attempt);
    },
    // A streamed call without onRetry is one its caller cannot void (the provider does not retry
    // it once chunks went out): it keeps going without one.
    ...(request.onRetry || !request.onDelta ? { onRetry } : {}),
  };
  try {
    const result = await call(traced);
    if (span) {
      span.setAttributes({
        'gen_ai.response.model': result.model,
        'gen_ai.usage.input_tokens': result.usage.prompt_tokens,
        'gen_ai.usage.output_tokens': result.usage.completion_tokens,
        ...(result.finishReason ? { 'gen_ai.response.finish_reasons': [result.finishReason] } : {}),
      });
    }
    return result;
  } catch (err) {
    if (span) recordFailure(span, err, (err as { kind?: string }).kind);
    throw err;
  } finally {
    span?.end();
  }
}
