// Row 9: a workflow-engine peer in the same run. Ours: the three-node echo
// workflow (text_input -> llm_call on `echo` -> text_output), each run one POST .../run with
// `Prefer: wait` answered with the ended run. n8n (bench/peers/n8n.ts): Webhook -> Set -> Respond to
// Webhook, each run one POST to its production webhook answered by the last node. Both at 1 client
// (the latency a caller sees: the goal is ours ≤ 1/3 of n8n's p50) and at 16 (the throughput: ours
// ≥ 3x n8n's runs/s). Ours is measured first and n8n started after, so neither idles beside the other.
import type { Bench, RowGroup } from '../bench.ts';
import { N8N_VERSION, startN8n } from '../peers/n8n.ts';
import type { LoadResult } from '../types.ts';
import { NOT_AVAILABLE, THREE_NODE_WORKFLOW } from './api.ts';

/** Far above a run's seconds, so the POST answers with the ended run. */
const RUN_WAIT_SECONDS = 30;
const TEXT = 'Summarize the benchmark.';
export const ENGINE_CLIENTS = [1, 16] as const;

async function oursAt(
  bench: Bench,
): Promise<((connections: number, seconds?: number) => Promise<LoadResult>) | undefined> {
  const { baseUrl } = bench.service;
  const headers = { authorization: `Bearer ${bench.user.key.token}`, 'content-type': 'application/json' };
  const created = await fetch(`${baseUrl}/api/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify(THREE_NODE_WORKFLOW),
  });
  if (created.status !== 201) return undefined;
  const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
  return (connections, seconds = bench.common.durationSeconds) =>
    bench.load({
      kind: 'runs',
      connections,
      durationSeconds: seconds,
      baseUrl,
      apiKey: bench.user.key.token,
      workflowId,
      inputs: { text: TEXT },
      pollMs: bench.options.pollMs,
      waitSeconds: RUN_WAIT_SECONDS,
    });
}

export const engineRows: RowGroup = {
  ids: ['9'],
  async run(bench) {
    const ours = await oursAt(bench);
    if (!ours) {
      bench.record('9. echo workflow vs n8n', NOT_AVAILABLE);
      return;
    }
    // Not recorded: a second first, as row 7 does (the runs' code is cold after the workflow's creation).
    await ours(16, 1);
    const [ours1, ours16] = [await ours(1), await ours(16)];

    console.error('  starting n8n (its own process, SQLite)…');
    const n8n = await startN8n();
    let theirs: LoadResult[] | string;
    if (typeof n8n === 'string') {
      theirs = n8n;
    } else {
      const webhook = (connections: number, seconds = bench.common.durationSeconds) =>
        bench.load(
          {
            kind: 'webhook',
            connections,
            durationSeconds: seconds,
            url: n8n.webhookUrl,
            body: JSON.stringify({ text: TEXT }),
            expect: TEXT,
          },
          { peerPids: n8n.pids },
        );
      await webhook(16, 1);
      theirs = [await webhook(1), await webhook(16)];
      await n8n.stop();
    }
    const peer = typeof theirs === 'string' ? undefined : theirs;
    bench.record('9. echo workflow, 1 client, Prefer: wait', ours1, {
      ...(peer && { ratio: ours1.p50 / peer[0]!.p50 }),
      target: 'p50 ≤ 0.33x n8n (ratio of p50)',
    });
    bench.record(`   peer: n8n ${N8N_VERSION} webhook, 1 client`, peer ? peer[0]! : (theirs as string));
    bench.record('9b. echo workflow, 16 clients, Prefer: wait', ours16, {
      ...(peer && { ratio: ours16.rps / peer[1]!.rps }),
      target: '≥ 3x n8n runs/s',
    });
    if (peer) bench.record(`   peer: n8n ${N8N_VERSION} webhook, 16 clients`, peer[1]!);
  },
};
