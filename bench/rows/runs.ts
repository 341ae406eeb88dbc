// Row 7: runs of the three-node workflow, POST .../run to `completed`. Rows 7 and 7b: a client that
// asks the POST to wait for the end (`Prefer: wait`, one request per run); rows 7p and 7bp: the
// same runs as a client polling GET every --poll-ms sees them. Both in one run tell the client's
// share of the latency from the service's.
import type { RowGroup } from '../bench.ts';
import { NOT_AVAILABLE, THREE_NODE_WORKFLOW } from './api.ts';

/** `Prefer: wait`: far above a run's seconds, so the POST answers with the ended run. */
const RUN_WAIT_SECONDS = 30;

export const runsRows: RowGroup = {
  ids: ['7'],
  async run(bench) {
    const { baseUrl } = bench.service;
    const { user, common, options } = bench;
    const keyHeaders = { authorization: `Bearer ${user.key.token}`, 'content-type': 'application/json' };
    const created = await fetch(`${baseUrl}/api/workflows`, {
      method: 'POST',
      headers: keyHeaders,
      body: JSON.stringify(THREE_NODE_WORKFLOW),
    });
    const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    const probe = await fetch(`${baseUrl}/api/workflows/${workflowId}/run`, {
      method: 'POST',
      headers: keyHeaders,
      body: JSON.stringify({ inputs: { text: 'warm-up' } }),
    });
    const runs = (connections: number, client: 'wait' | 'poll', durationSeconds = common.durationSeconds) =>
      probe.status !== 202
        ? NOT_AVAILABLE
        : bench.load({
            kind: 'runs',
            ...common,
            durationSeconds,
            connections,
            baseUrl,
            apiKey: user.key.token,
            workflowId,
            inputs: { text: 'Summarize the benchmark.' },
            pollMs: options.pollMs,
            waitSeconds: client === 'wait' ? RUN_WAIT_SECONDS : undefined,
          });
    // Not recorded: a second of each client first. The runs' code (and the queue's) is cold after
    // the probe, and the first load measured paid for it: 0.7-0.8x of the same load run second.
    await runs(common.connections, 'wait', 1);
    await runs(common.connections, 'poll', 1);
    bench.record('7. three-node runs (runs/s), Prefer: wait', await runs(common.connections, 'wait'), {
      target: '≥ 2x 95 runs/s (3280b19)',
    });
    // The same with 4 clients: a run's latency when it does not queue behind 31 others (closed loop:
    // at 32 clients, runs/s × p50 ≈ 32 whatever the pipeline's own latency is).
    bench.record('7b. three-node runs, 4 clients, Prefer: wait', await runs(4, 'wait'), { target: 'p50 ≤ 15 ms' });
    bench.record('7p. three-node runs (runs/s), polling', await runs(common.connections, 'poll'));
    bench.record('7bp. three-node runs, 4 clients, polling', await runs(4, 'poll'));
  },
};
