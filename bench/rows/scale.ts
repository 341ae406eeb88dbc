// Row 10: runs at scale. 2 API processes and 2 worker processes on one store
// (bench/cluster.ts); 32 clients (--connections) start the three-node echo workflow with `Prefer:
// wait`, half on each API process; 4 more clients check that a run's events reach an event stream
// opened on the API process that did not start it (bench/scaleLoad.ts). The row: runs/s, p50 and
// p99 of the waiting clients; its note: how many observed runs' events reached the other process.
import type { RowGroup } from '../bench.ts';
import { startCluster } from '../cluster.ts';
import { THREE_NODE_WORKFLOW } from './api.ts';

const OBSERVERS = 4;
/** Far above a run's seconds, so the POST answers with the ended run. */
const RUN_WAIT_SECONDS = 30;

export const scaleRows: RowGroup = {
  ids: ['10'],
  async run(bench) {
    console.error('  starting 2 API and 2 worker processes on their own store…');
    const cluster = await startCluster(bench.stores);
    const [a, b] = cluster.apis;
    // Their CPU is the service's in the usage table (the main service idles meanwhile).
    for (const pid of [a.pid, b.pid, ...cluster.workerPids]) bench.probes.addServicePid(pid);
    const headers = { authorization: `Bearer ${cluster.apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${a.baseUrl}/api/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify(THREE_NODE_WORKFLOW),
    });
    if (created.status !== 201)
      throw new Error(`creating the workflow answered ${created.status}: ${await created.text()}`);
    const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    const load = (durationSeconds: number) =>
      bench.load({
        kind: 'scale',
        connections: bench.common.connections,
        durationSeconds,
        apis: [a.baseUrl, b.baseUrl],
        apiKey: cluster.apiKey,
        workflowId,
        inputs: { text: 'Summarize the benchmark.' },
        observers: OBSERVERS,
        waitSeconds: RUN_WAIT_SECONDS,
      });
    await load(1); // not recorded: warms all four processes, as row 7 does its one
    bench.record(
      `10. 2 API + 2 workers, ${bench.common.connections} clients, Prefer: wait`,
      await load(bench.common.durationSeconds),
      { target: 'p99; events reach the other API' },
    );
    await cluster.stop();
  },
};
