// Jaeger v1.76.0 (scripts/jaeger.sh builds it once from the Go module proxy) as a collector for the
// tracing test and the bench's tracing rows: memory storage, OTLP over HTTP in, the query API out,
// on free ports (test/tracing/jaeger.yaml), so parallel runs do not collide.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './processes.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The cached Jaeger binary, built on first use (minutes); or why there is none (no Go, a failed build). */
export function jaegerBinary(): { bin?: string; why?: string } {
  const built = spawnSync('sh', ['scripts/jaeger.sh'], { cwd: root, encoding: 'utf8', timeout: 15 * 60_000 });
  if (built.status === 0) return { bin: built.stdout.trim() };
  return { why: built.stderr.trim().split('\n').pop() || `scripts/jaeger.sh exited with ${built.status}` };
}

export interface Jaeger {
  /** Where OTEL_EXPORTER_OTLP_ENDPOINT points (OTLP over HTTP). */
  otlpUrl: string;
  /** Jaeger's query API (`/api/traces/{traceId}`). */
  queryUrl: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts Jaeger from `bin` and waits for its query API. */
export async function startJaeger(bin: string): Promise<Jaeger> {
  const [otlp, query, queryGrpc] = await Promise.all([freePort(), freePort(), freePort()]);
  let text = '';
  const child = spawn(bin, ['--config', 'file:test/tracing/jaeger.yaml'], {
    cwd: root,
    env: {
      ...process.env,
      JAEGER_OTLP_PORT: String(otlp),
      JAEGER_QUERY_PORT: String(query),
      JAEGER_QUERY_GRPC_PORT: String(queryGrpc),
    },
  });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const queryUrl = `http://127.0.0.1:${query}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Jaeger exited with ${child.exitCode}:\n${text}`);
    const ok = await fetch(`${queryUrl}/api/services`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`Jaeger's query API did not answer within 30 s:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    otlpUrl: `http://127.0.0.1:${otlp}`,
    queryUrl,
    output: () => text,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
