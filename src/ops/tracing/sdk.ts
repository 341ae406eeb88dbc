// The OpenTelemetry Node SDK, started by register.ts before the service's modules load, only when
// tracing is wanted (wanted.ts). Everything it does is configured by the standard OTEL_* variables
// (exporter, endpoint, protocol, sampler, batch delays, resource attributes); the SDK reads them
// itself. This is the only module that imports the SDK: the engine speaks @opentelemetry/api only.
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Attributes, Span } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { KnexInstrumentation } from '@opentelemetry/instrumentation-knex';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { scrubbedUrlAttributes } from './scrub.ts';
import { SHUTDOWN_KEY } from '../../shared/tracing.ts';

/** Rewrites the URL attributes the HTTP instrumentations set at a span's start (trigger tokens, query values). */
function scrubUrls(span: Span): void {
  const attributes = (span as unknown as { attributes?: Attributes }).attributes;
  if (!attributes) return;
  for (const [key, value] of Object.entries(scrubbedUrlAttributes(attributes))) span.setAttribute(key, value);
}

// Which process a span comes from, unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it.
const entry = process.argv[1] ?? '';
const serviceName = /worker\.ts$/.test(entry) ? 'openauth-workflows-worker' : 'openauth-workflows';
const named =
  Boolean(process.env.OTEL_SERVICE_NAME) || /service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');

const sdk = new NodeSDK({
  ...(named ? {} : { serviceName }),
  instrumentations: [
    new HttpInstrumentation({
      // Headers are never recorded (none are listed to be): Authorization, cookies and API keys stay out.
      requestHook: (span) => scrubUrls(span),
    }),
    // The route's handler only: a span for each of the ~20 middleware layers every request passes
    // (helmet, parsers, the contract validator...) cost 8x the CPU of a cached user info (bench row tr1).
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
    // Only inside a trace: the queue's polling and the sweeps would otherwise be a trace each.
    new KnexInstrumentation({ requireParentSpan: true }),
    new PgInstrumentation({ requireParentSpan: true }),
    new UndiciInstrumentation({ requestHook: (span) => scrubUrls(span) }),
  ],
});
sdk.start();
// The service's stop (lifecycle.ts) flushes what the batch processor still holds before it exits.
(globalThis as Record<symbol, unknown>)[SHUTDOWN_KEY] = () => sdk.shutdown();
