// Without OTEL_* the tracing preload starts nothing: no SDK, no instrumentation, no module hooks;
// the API's no-op tracer is all that runs. With an exporter named, the same preload starts the SDK.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

// Loaded as the service's entry would be, after the preload: what tracing left behind.
const probe = `
import { trace } from '@opentelemetry/api';
import express from 'express';
import http from 'node:http';
const api = globalThis[Symbol.for('opentelemetry.js.api.1')];
const span = trace.getTracer('probe').startSpan('probe');
console.log(JSON.stringify({
  registered: Object.keys(api ?? {}).filter((k) => k !== 'version'),
  recording: span.isRecording(),
  shutdown: typeof globalThis[Symbol.for('openauth-workflows.tracing.shutdown')],
  httpPatched: '__wrapped' in http.request || String(http.request).includes('outgoingRequest'),
  express: typeof express,
}));
`;

function preloaded(env: Record<string, string>): Record<string, unknown> {
  const { OTEL_EXPORTER_OTLP_ENDPOINT: _e, OTEL_TRACES_EXPORTER: _t, ...inherited } = process.env;
  const result = spawnSync(
    process.execPath,
    ['--import', './src/ops/tracing/register.ts', '--input-type=module', '-e', probe],
    { cwd: root, env: { ...inherited, ...env }, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe('the tracing preload', () => {
  it('without OTEL_* starts no SDK: nothing registered with the API, spans are no-ops, http is not patched', () => {
    expect(preloaded({})).toEqual({
      registered: [],
      recording: false,
      shutdown: 'undefined',
      httpPatched: false,
      express: 'function',
    });
  });

  it('with OTEL_TRACES_EXPORTER=none (or OTEL_SDK_DISABLED=true) starts none either', () => {
    expect(preloaded({ OTEL_TRACES_EXPORTER: 'none' })).toMatchObject({ registered: [], recording: false });
    expect(preloaded({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toMatchObject({
      registered: [],
      recording: false,
    });
  });

  it('with an exporter named, starts the SDK: a tracer provider and propagator registered, spans recorded, http patched', () => {
    const on = preloaded({ OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '60000' });
    expect(on).toMatchObject({ recording: true, shutdown: 'function', httpPatched: true });
    expect(on.registered).toEqual(expect.arrayContaining(['trace', 'propagation', 'context']));
  });
});
