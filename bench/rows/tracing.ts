// Rows tr: the cost of watching. User info and three-node runs (Prefer: wait) with tracing off (the
// service as every other row runs it), then on: the same service restarted on the same stores with
// the tracing preload (`--import`, as `npm start` runs it) exporting every span over OTLP to a
// Jaeger (scripts/jaeger.sh). An "on" row's ratio is on ÷ off of the same run (1.00x: free). Last
// in the table: it replaces the service. Without Jaeger (no Go) the "on" rows say why.
import { jaegerBinary, startJaeger } from '../../test/support/jaeger.ts';
import type { Bench, RowGroup } from '../bench.ts';
import { onCleanup, startService, type Service } from '../processes.ts';
import type { LoadResult } from '../types.ts';
import { NOT_AVAILABLE, THREE_NODE_WORKFLOW } from './api.ts';

/** Far above a run's seconds, so the POST answers with the ended run. */
const RUN_WAIT_SECONDS = 30;

/** The two loads on `service`, each after a second's warm-up (a load on cold code measures less). */
async function measure(bench: Bench, service: Service): Promise<{ userinfo: LoadResult; runs: LoadResult | string }> {
  const { common, user } = bench;
  const keyHeaders = { authorization: `Bearer ${user.key.token}`, 'content-type': 'application/json' };
  const created = await fetch(`${service.baseUrl}/api/workflows`, {
    method: 'POST',
    headers: keyHeaders,
    body: JSON.stringify(THREE_NODE_WORKFLOW),
  });
  const workflowId = created.ok ? ((await created.json()) as { data: { id: string } }).data.id : undefined;
  const userinfo = (durationSeconds: number) =>
    bench.load({
      kind: 'fixed',
      ...common,
      durationSeconds,
      url: `${service.baseUrl}/api/open/v1/userinfo`,
      method: 'GET',
      headers: { authorization: `Bearer ${user.bearer}` },
    });
  const runs = (durationSeconds: number) =>
    workflowId === undefined
      ? Promise.resolve(NOT_AVAILABLE)
      : bench.load({
          kind: 'runs',
          ...common,
          durationSeconds,
          baseUrl: service.baseUrl,
          apiKey: user.key.token,
          workflowId,
          inputs: { text: 'Summarize the benchmark.' },
          pollMs: bench.options.pollMs,
          waitSeconds: RUN_WAIT_SECONDS,
        });
  await userinfo(1);
  const u = await userinfo(common.durationSeconds);
  await runs(1);
  return { userinfo: u, runs: await runs(common.durationSeconds) };
}

const ratio = (on: LoadResult | string, off: LoadResult | string) =>
  typeof on === 'string' || typeof off === 'string' ? {} : { ratio: on.rps / off.rps };

export const tracingRows: RowGroup = {
  ids: ['tr'],
  async run(bench) {
    const off = await measure(bench, bench.service);
    bench.record('tr1. GET userinfo, tracing off', off.userinfo);
    bench.record('tr2. three-node runs, Prefer: wait, tracing off', off.runs);
    const { bin, why } = jaegerBinary();
    if (!bin) {
      bench.record('tr1. GET userinfo, tracing on (OTLP to Jaeger)', `skipped: ${why}`);
      bench.record('tr2. three-node runs, Prefer: wait, tracing on (OTLP to Jaeger)', `skipped: ${why}`);
      return;
    }
    const jaeger = await startJaeger(bin);
    onCleanup(() => jaeger.stop());
    await bench.service.stop(); // its worker would take the traced service's runs
    const traced = await startService(bench.stores, {
      env: { SECRETS_KEY: bench.service.env.SECRETS_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl },
      nodeFlags: ['--import', './src/ops/tracing/register.ts'],
    });
    bench.service = traced;
    bench.probes.addServicePid(traced.pid); // its CPU and writes are the service's from now on
    const on = await measure(bench, traced);
    bench.record('tr1. GET userinfo, tracing on (OTLP to Jaeger)', on.userinfo, ratio(on.userinfo, off.userinfo));
    bench.record('tr2. three-node runs, Prefer: wait, tracing on (OTLP to Jaeger)', on.runs, ratio(on.runs, off.runs));
  },
};
