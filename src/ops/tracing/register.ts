// Loaded before the service's own modules (`node --import`, see package.json's start and worker
// scripts), so the instrumentations hook express, http, pg, knex and mysql2 before they are
// imported. Tracing starts only when an OTLP endpoint or a traces exporter is named in the standard
// OpenTelemetry variables (wanted.ts); otherwise nothing more is imported here, and the API's no-op tracer is
// all the service's spans cost.
import { INSTRUMENTED_MODULES, tracingWanted } from './wanted.ts';

if (tracingWanted(process.env)) {
  const { register } = await import('node:module');
  // Only the modules the instrumentations patch go through import-in-the-middle's loader: the
  // service's own modules load as they would without tracing.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: INSTRUMENTED_MODULES },
  });
  await import('./sdk.ts');
}
