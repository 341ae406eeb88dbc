// Rows e1-e4: what the engine costs per node and under its own kinds of load, each with a goal
// checked in every run (printed per run, with the load average, beside the median):
//   e1. a 10-node chain (text_input -> 8 llm_call on the built-in `echo` -> text_output), 1 client,
//       `Prefer: wait`: the p50 per node (run latency ÷ 10), the service's CPU and the store's
//       statements per node, and the floor (bench/engineProbes.ts stepFloor: a step's INSERT issued
//       by the bench itself). Goal: ≤ 1 ms per node p50 and ≤ 2 store statements per node.
//   e2. 32 clients of text_input -> llm_call on a provider answering after 200 ms
//       (bench/fakeProvider.ts) -> text_output on one process: runs/s. The concurrency bound is
//       RUN_CONCURRENCY (32) ÷ 0.2 s = 160 runs/s; goal ≥ 128 (80% of it).
//   e3. an agent making 10 tool calls (one per model answer, each a two-node workflow tool), 1
//       client: latency and the rows one run stores.
//   e4. a 10,000-item map (100 items each mapping 100), runs one after another: latency, the
//       service's peak RSS growth over each run (goal < 150 MiB) and the rows one run stores.
// All as the bench user, whose per-user limits bench/processes.ts raises for every row (one user
// sends all the load); the production fairness limits are row 11's.
import type { Bench, RowGroup } from '../bench.ts';
import { memoryMiB, resetPeak, StoreReader, type StoredRows } from '../engineProbes.ts';
import { AGENT_TOOL_CALLS, PROVIDER_DELAY_MS, SLOW_MODEL, TOOL_NAME, TOOLS_MODEL } from '../fakeProvider.ts';
import { fmt } from '../table.ts';
import type { LoadResult } from '../types.ts';
import { usageBetween } from '../usage.ts';

/** Far above a run's seconds, so the POST answers with the ended run. */
const RUN_WAIT_SECONDS = 30;
const CHAIN_NODES = 10;
const MAP_SIDE = 100;
const MAP_RUNS = 3;
const RSS_GOAL_MIB = 150;

type Node = { id: string; type: string; config: Record<string, unknown> };
const chain = (nodes: Node[]) => ({
  nodes,
  edges: nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id })),
});
const input: Node = { id: 'in', type: 'text_input', config: { variable: 'text' } };
const output: Node = { id: 'out', type: 'text_output', config: { format: 'plain' } };
const llm = (id: string, model: string): Node => ({
  id,
  type: 'llm_call',
  config: { model, temperature: 0, max_tokens: 64 },
});

const CHAIN = chain([input, ...Array.from({ length: CHAIN_NODES - 2 }, (_, i) => llm(`llm${i + 1}`, 'echo')), output]);
const SLOW = chain([input, llm('llm', SLOW_MODEL), output]);
const TOOL = chain([{ id: 'q', type: 'text_input', config: { variable: 'q' } }, output]);
const agent = (toolId: string, version: number) =>
  chain([
    input,
    {
      id: 'bot',
      type: 'agent',
      config: {
        model: TOOLS_MODEL,
        prompt: '{{ inputs.text }}',
        max_iterations: AGENT_TOOL_CALLS + 1,
        tools: [{ kind: 'workflow', name: TOOL_NAME, description: 'Looks q up.', workflow_id: toolId, version }],
      },
    },
    output,
  ]);
const json = (id: string): Node => ({ id, type: 'text_output', config: { format: 'json' } });
const item: Node = { id: 'item', type: 'text_input', config: { variable: 'item' } };
const mapOf = (id: string, body: object): Node => ({
  id,
  type: 'map',
  config: { max_items: MAP_SIDE, concurrency: 16, body },
});
const MAP = chain([
  { id: 'list', type: 'text_input', config: { variable: 'list', type: 'array' } },
  mapOf('each', chain([item, mapOf('inner', chain([item, json('value')])), json('row')])),
  json('result'),
]);
const MAP_INPUT = Array.from({ length: MAP_SIDE }, (_, i) =>
  Array.from({ length: MAP_SIDE }, (_, j) => i * MAP_SIDE + j),
);

async function create(bench: Bench, name: string, graph: object): Promise<{ id: string; version: number }> {
  const res = await fetch(`${bench.service.baseUrl}/api/workflows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bench.user.key.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, ...graph }),
  });
  if (res.status !== 201) throw new Error(`creating ${name} answered ${res.status}: ${await res.text()}`);
  const data = ((await res.json()) as { data: { id: string; version?: number } }).data;
  return { id: data.id, version: data.version ?? 1 };
}

/** `connections` clients starting runs of `workflowId` with `Prefer: wait` for `seconds`. */
const runs = (bench: Bench, workflowId: string, connections: number, seconds: number, inputs = { text: 'Bench.' }) =>
  bench.load({
    kind: 'runs',
    connections,
    durationSeconds: seconds,
    baseUrl: bench.service.baseUrl,
    apiKey: bench.user.key.token,
    workflowId,
    inputs,
    pollMs: bench.options.pollMs,
    waitSeconds: RUN_WAIT_SECONDS,
  });

const rowsText = (r: StoredRows) =>
  `${r.runs + r.steps + r.events} rows (1 run, ${r.steps} steps, ${r.events} events), output ${fmt(r.outputBytes / 1024, 0)} KiB`;

async function chainRow(bench: Bench, store: StoreReader): Promise<void> {
  const wf = await create(bench, 'Bench 10-node chain', CHAIN);
  await runs(bench, wf.id, 1, 1); // not recorded: warms the runs' code
  const r = await runs(bench, wf.id, 1, bench.common.durationSeconds);
  const u = r.usage!;
  const perNode = r.p50 / CHAIN_NODES;
  const statements = u.perRequest['mariadb.statements']! / CHAIN_NODES;
  const last = await store.lastRun(wf.id);
  const floor = last ? await store.stepFloor(last) : { aloneMs: NaN, inBatchMs: NaN };
  r.note =
    `per node: p50 ${fmt(perNode, 2)} ms, service CPU ${fmt((u.cpuMsPerRequest.service! * 1000) / CHAIN_NODES, 0)} µs, ` +
    `MariaDB statements ${fmt(statements, 2)}, queue (PostgreSQL) transactions ${fmt(u.perRequest['postgres.commits']! / CHAIN_NODES, 2)}, ` +
    `service write calls ${fmt(u.perRequest['service.writes']! / CHAIN_NODES, 2)}; ` +
    `floor: a step's INSERT alone ${fmt(floor.aloneMs, 2)} ms p50 (its own commit), as one of 10 rows of one INSERT ${fmt(floor.inBatchMs, 3)} ms` +
    (last ? `; one run stores ${rowsText(await store.storedRows(last))}` : '');
  bench.record('e1. 10-node echo chain, 1 client, Prefer: wait', r, {
    target: '≤ 1 ms/node p50, ≤ 2 stmts/node',
    goal: {
      text: `${fmt(perNode, 2)} ms/node, ${fmt(statements, 2)} stmts/node`,
      met: perNode <= 1 && statements <= 2,
    },
  });
}

async function slowProviderRow(bench: Bench): Promise<void> {
  const wf = await create(bench, 'Bench 200 ms provider', SLOW);
  const clients = 32;
  await runs(bench, wf.id, clients, 2); // not recorded: warms the code and the pools
  const r = await runs(bench, wf.id, clients, bench.common.durationSeconds);
  const goal = 0.8 * (clients / (PROVIDER_DELAY_MS / 1000));
  bench.record(`e2. ${clients} clients, ${PROVIDER_DELAY_MS} ms provider, one process`, r, {
    target: `≥ ${goal} runs/s`,
    goal: { text: `${fmt(r.rps, 0)} runs/s`, met: r.rps >= goal },
  });
}

async function agentRow(bench: Bench, store: StoreReader): Promise<void> {
  const tool = await create(bench, 'Bench lookup tool', TOOL);
  const wf = await create(bench, 'Bench agent', agent(tool.id, tool.version));
  await runs(bench, wf.id, 1, 1);
  const r = await runs(bench, wf.id, 1, bench.common.durationSeconds);
  const last = await store.lastRun(wf.id);
  if (last) r.note = `one run stores ${rowsText(await store.storedRows(last))}`;
  bench.record(`e3. agent, ${AGENT_TOOL_CALLS} tool calls, 1 client, Prefer: wait`, r, {
    target: 'latency, stored rows',
    goal: { text: `p50 ${fmt(r.p50, 0)} ms`, met: r.errors === 0 },
  });
}

/** Starts a run and waits for its end (POST, then GETs, each with `Prefer: wait`). */
async function runToEnd(bench: Bench, workflowId: string, inputs: object): Promise<{ id: string; status: string }> {
  const headers = {
    authorization: `Bearer ${bench.user.key.token}`,
    'content-type': 'application/json',
    prefer: 'wait=60',
  };
  const base = `${bench.service.baseUrl}/api/workflows/${workflowId}/runs`;
  const res = await fetch(`${bench.service.baseUrl}/api/workflows/${workflowId}/run`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ inputs }),
  });
  let run = ((await res.json()) as { data: { id: string; status: string } }).data;
  while (run.status === 'queued' || run.status === 'running') {
    const got = await fetch(`${base}/${run.id}`, { headers });
    run = ((await got.json()) as { data: { id: string; status: string } }).data;
  }
  return run;
}

async function mapRow(bench: Bench, store: StoreReader): Promise<void> {
  const wf = await create(bench, 'Bench 10,000-item map', MAP);
  const pid = bench.service.pid;
  const latencies: number[] = [];
  const growth: number[] = [];
  let errors = 0;
  let last: string | undefined;
  const before = await bench.probes.snapshot();
  const t0 = performance.now();
  for (let i = 0; i < MAP_RUNS; i += 1) {
    const rss = await memoryMiB(pid, 'VmRSS');
    const reset = await resetPeak(pid);
    const started = performance.now();
    const run = await runToEnd(bench, wf.id, { list: MAP_INPUT });
    latencies.push(performance.now() - started);
    growth.push(reset ? (await memoryMiB(pid, 'VmHWM')) - rss : NaN);
    if (run.status !== 'completed') errors += 1;
    last = run.id;
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = await bench.probes.snapshot(1100);
  const sorted = [...latencies].sort((a, b) => a - b);
  const peak = Math.max(...growth);
  const result: LoadResult = {
    requests: MAP_RUNS,
    rps: MAP_RUNS / seconds,
    p50: sorted[Math.floor((sorted.length - 1) / 2)]!,
    p99: sorted.at(-1)!,
    errors,
    seconds,
    note:
      `${MAP_RUNS} runs one after another: ${latencies.map((l) => `${fmt(l / 1000, 2)} s`).join(', ')}; ` +
      `service peak RSS growth ${growth.map((g) => `${fmt(g, 0)} MiB`).join(', ')} (its main process; compute processes aside)` +
      (last ? `; one run stores ${rowsText(await store.storedRows(last))}` : ''),
    usage: usageBetween(before, after, MAP_RUNS, bench.probes.ticksPerSecond),
  };
  bench.record(`e4. ${MAP_SIDE * MAP_SIDE}-item map (${MAP_SIDE} x ${MAP_SIDE}), 1 client`, result, {
    target: `peak RSS growth < ${RSS_GOAL_MIB} MiB`,
    goal: { text: `+${fmt(peak, 0)} MiB`, met: peak < RSS_GOAL_MIB && errors === 0 },
  });
}

export const engineCostRows: RowGroup = {
  ids: ['e1', 'e2', 'e3', 'e4'],
  async run(bench) {
    const store = await StoreReader.open(bench.stores.databaseUrl);
    try {
      if (bench.options.wanted('e1')) await chainRow(bench, store);
      if (bench.options.wanted('e2')) await slowProviderRow(bench);
      if (bench.options.wanted('e3')) await agentRow(bench, store);
      if (bench.options.wanted('e4')) await mapRow(bench, store);
    } finally {
      await store.close();
    }
  },
};
