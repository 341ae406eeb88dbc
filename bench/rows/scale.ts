// Row 10: runs at scale (issue 37 item 5). 2 API processes and 2 worker processes on one store
// (bench/cluster.ts); 32 clients (--connections) start the three-node echo workflow with `Prefer:
// wait`, half on each API process; 4 more clients check that a run's events reach an event stream
// opened on the API process that did not start it (bench/scaleLoad.ts). The row: runs/s, p50 and
// p99 of the waiting clients; its note: how many observed runs' events reached the other process.
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RowGroup } from '../bench.ts';
import { startCluster } from '../cluster.ts';
import { spawnNode } from '../processes.ts';
import type { ScaleResult, ScaleSpec } from '../scaleLoad.ts';
import type { LoadResult } from '../types.ts';
import { THREE_NODE_WORKFLOW } from './api.ts';

const OBSERVERS = 4;
const RUN_WAIT_SECONDS = 30;

async function scaleLoad(spec: ScaleSpec): Promise<ScaleResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'oa-bench-scale-'));
  const file = path.join(dir, 'spec.json');
  await writeFile(file, JSON.stringify(spec));
  const child = spawnNode(['bench/scaleLoad.ts', file]);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const [code] = (await once(child, 'exit')) as [number];
  await rm(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the scale load failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as ScaleResult;
}

/** The row as the table shows it; the cross-process count in its note. */
export function scaleRow(r: ScaleResult, observers: number): LoadResult {
  const o = r.observed;
  const problems = o.problems.length ? `; e.g. ${o.problems.join('; ')}` : '';
  return {
    requests: r.runs, rps: r.rps, p50: r.p50, p99: r.p99, errors: r.errors, seconds: r.seconds,
    note: `2 API + 2 worker processes; ${o.reached} of ${o.runs} runs started on one API process had all their events, through run.finished, on a stream of the other (${o.live} of them asked for before the run ended; ${observers} observer clients beside the measured ones)${problems}`,
  };
}

export const scaleRows: RowGroup = {
  ids: ['10'],
  async run(bench) {
    console.error('  starting 2 API and 2 worker processes on their own store…');
    const cluster = await startCluster(bench.stores);
    const [a, b] = cluster.apis;
    const headers = { authorization: `Bearer ${cluster.apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${a.baseUrl}/api/workflows`, { method: 'POST', headers, body: JSON.stringify(THREE_NODE_WORKFLOW) });
    if (created.status !== 201) throw new Error(`creating the workflow answered ${created.status}: ${await created.text()}`);
    const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    const spec = (durationSeconds: number): ScaleSpec => ({
      apis: [a.baseUrl, b.baseUrl], apiKey: cluster.apiKey, workflowId, inputs: { text: 'Summarize the benchmark.' },
      connections: bench.common.connections, observers: OBSERVERS, durationSeconds, waitSeconds: RUN_WAIT_SECONDS,
    });
    await scaleLoad(spec(1)); // not recorded: warms all four processes, as row 7 does its one
    const result = await scaleLoad(spec(bench.common.durationSeconds));
    bench.record(`10. 2 API + 2 workers, ${bench.common.connections} clients, Prefer: wait`, scaleRow(result, OBSERVERS), { target: 'p99; events on the other API' });
  },
};
