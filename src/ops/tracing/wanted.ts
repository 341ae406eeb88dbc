/** The modules the instrumentations patch when imported (ESM), by the names they are imported by. */
export const INSTRUMENTED_MODULES = ['http', 'https', 'node:http', 'node:https', 'express', 'pg', 'knex', 'mysql2'];

/**
 * Whether tracing starts: only when OTEL_EXPORTER_OTLP_ENDPOINT (or its traces variant) or
 * OTEL_TRACES_EXPORTER is set, and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none
 * says otherwise. The embedded default (none set) starts nothing.
 */
export function tracingWanted(env: Record<string, string | undefined>): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}
