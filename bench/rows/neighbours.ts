// Row 11 of `npm run bench`: a noisy neighbour. Alice runs the worst case of each shared capacity
// the red team found (a nested map at the documented limits, in as many runs as her quota allows;
// 800 every-minute schedules; 60 callback endpoints that answer after 60 s), while Bob's workflow
// list, his one-node runs and his run-ended callback are measured idle and then under that load,
// in the same run. Goal: Bob's p50 within 2x idle and none of his requests failing.
// Its own service process on databases of its own, at the production defaults of every per-user limit (only the API and
// run-start rates are raised, so Bob's load measures latency, not his own rate limits).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminCli } from '../../test/support/processes.ts';
import type { Bench, RowGroup } from '../bench.ts';
import { freshMysqlDatabase, freshPgDatabase, startService, type Stores } from '../processes.ts';
import type { LoadResult } from '../types.ts';

const CLIENTS = 4;
const SCHEDULE_WORKFLOWS = 40;
const SCHEDULES_EACH = 20;
const SLOW_WORKFLOWS = 6;
const CALLBACKS_EACH = 10;
const CALLBACK_SAMPLES = 5;

const ONE_NODE = (name: string) => ({
  name,
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [{ from: 'in', to: 'out' }],
});

/** map 1,000 x (a split of 1,000 items -> map 1,000): about twenty lines of JSON. */
function nestedMap(items: number) {
  const list = `{% for i in (1..${items}) %}{{ i }},{% endfor %}`;
  const inner = {
    nodes: [
      { id: 'item', type: 'text_input', config: { variable: 'item' } },
      { id: 'shout', type: 'template', config: { template: '{{ inputs.item }}!' } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'item', to: 'shout' },
      { from: 'shout', to: 'out' },
    ],
  };
  const outer = {
    nodes: [
      { id: 'item', type: 'text_input', config: { variable: 'item' } },
      { id: 'many', type: 'split', config: { by: 'separator', separator: ',', max_items: items, text: list } },
      { id: 'inner', type: 'map', config: { body: inner, max_items: items, concurrency: 16 } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'item', to: 'many' },
      { from: 'many', to: 'inner' },
      { from: 'inner', to: 'out' },
    ],
  };
  return {
    name: `Bench nested map ${items}`,
    nodes: [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      { id: 'list', type: 'split', config: { by: 'separator', separator: ',', max_items: items, text: list } },
      { id: 'outer', type: 'map', config: { body: outer, max_items: items, concurrency: 16 } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'in', to: 'list' },
      { from: 'list', to: 'outer' },
      { from: 'outer', to: 'out' },
    ],
  };
}

function userKey(env: NodeJS.ProcessEnv, login: string): string {
  adminCli(env, 'user', 'create', '--login', login, '--password', 'neighbour-passphrase-1', '--name', login);
  return adminCli(
    env,
    'token',
    'create',
    '--user',
    login,
    '--namespace',
    login,
    '--name',
    `${login} key`,
    '--usage-scenario',
    'paid',
    '--permission',
    'workflows',
  ).token as string;
}

function api(baseUrl: string, key: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (text ? JSON.parse(text) : null) as { data: { id: string; finished_at: string | null } } | null,
    };
  };
}

/** Callback endpoints: `/slow` answers after 60 s; `/fast` answers at once and records when each run's callback came. */
async function callbackReceiver(): Promise<{ url: string; arrivals: Map<string, number>; close(): Promise<void> }> {
  const arrivals = new Map<string, number>();
  const held = new Set<IncomingMessage>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url === '/fast') {
      const runId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id: string } }).data.id;
      arrivals.set(runId, Date.now());
      res.end();
      return;
    }
    held.add(req);
    setTimeout(() => res.end(), 60_000).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

/** Bob's callback delay: from his run's end to the callback's arrival, median of CALLBACK_SAMPLES runs. */
async function callbackDelay(
  call: ReturnType<typeof api>,
  workflowId: string,
  arrivals: Map<string, number>,
): Promise<LoadResult> {
  const delays: number[] = [];
  let errors = 0;
  const started = Date.now();
  for (let i = 0; i < CALLBACK_SAMPLES; i++) {
    const run = await call(
      'POST',
      `/api/workflows/${workflowId}/run`,
      { inputs: { text: 'hi' } },
      { prefer: 'wait=30' },
    );
    const finished = run.body?.data?.finished_at;
    if (run.status >= 300 || !finished) {
      console.error(`  11. Bob's callback run answered ${run.status}: ${JSON.stringify(run.body).slice(0, 300)}`);
      errors++;
      continue;
    }
    const deadline = Date.now() + 120_000;
    while (!arrivals.has(run.body!.data.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const arrived = arrivals.get(run.body!.data.id);
    if (arrived === undefined) errors++;
    else delays.push(arrived - Date.parse(finished));
  }
  delays.sort((a, b) => a - b);
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
  const seconds = (Date.now() - started) / 1000;
  return { requests: delays.length, rps: delays.length / seconds, p50: at(0.5), p99: at(0.99), errors, seconds };
}

async function measureNeighbours(bench: Bench): Promise<void> {
  const { durationSeconds } = bench.common;
  const receiver = await callbackReceiver();
  const mysqlServer = new URL(bench.stores.databaseUrl);
  mysqlServer.pathname = '/';
  const own: Stores = {
    ...bench.stores,
    databaseUrl: await freshMysqlDatabase(mysqlServer.toString(), 'bench_neighbours'),
    queueUrl: await freshPgDatabase(bench.stores.queueUrl, 'bench_neighbours_queue'),
  };
  const service = await startService(own, {
    env: {
      // The production defaults of the per-user limits the bench raises for its one-user rows.
      USER_MAX_CONCURRENT_RUNS: '10',
      USER_MAX_WORKER_SLOTS: '0',
      USER_STEPS_PER_SECOND: '500',
      USER_MAX_WORKFLOWS: '1000',
      USER_MAX_STORED_BYTES: String(100 * 1024 * 1024),
      USER_RUNS_PER_MINUTE: '1000000',
      API_RATE_LIMIT_PER_MINUTE: '100000000',
      WORKFLOW_HTTP_ALLOW_HOSTS: '127.0.0.1',
    },
  });
  try {
    const { baseUrl, env } = service;
    const alice = api(baseUrl, userKey(env, 'alice'));
    const bobKey = userKey(env, 'bob');
    const bob = api(baseUrl, bobKey);
    const bobList = (await bob('POST', '/api/workflows', ONE_NODE('Bob one node'))).body!.data.id;
    const bobHooked = (await bob('POST', '/api/workflows', ONE_NODE('Bob with a callback'))).body!.data.id;
    await bob('POST', `/api/workflows/${bobHooked}/callbacks`, { url: `${receiver.url}/fast` });
    const common = { connections: CLIENTS, durationSeconds };
    const list = () =>
      bench.load({
        kind: 'fixed',
        ...common,
        url: `${baseUrl}/api/workflows?per_page=20`,
        method: 'GET',
        headers: { authorization: `Bearer ${bobKey}` },
        subMillisecond: true,
      });
    const runs = () =>
      bench.load({
        kind: 'runs',
        ...common,
        baseUrl,
        apiKey: bobKey,
        workflowId: bobList,
        inputs: { text: 'hello' },
        pollMs: 5,
        waitSeconds: 30,
      });

    await runs(); // warm-up, not recorded
    const idle = {
      list: await list(),
      runs: await runs(),
      callback: await callbackDelay(bob, bobHooked, receiver.arrivals),
    };

    // Alice's worst case of each kind; what the service refuses is counted, not retried.
    const refused: Record<string, number> = {};
    const refuse = (what: string, status: number) =>
      status >= 300 && (refused[`${what} ${status}`] = (refused[`${what} ${status}`] ?? 0) + 1);
    let heavy = await alice('POST', '/api/workflows', nestedMap(1000));
    refuse('nested map', heavy.status);
    if (heavy.status >= 300) heavy = await alice('POST', '/api/workflows', nestedMap(100));
    refuse('nested map of 100', heavy.status);
    for (let w = 0; w < SCHEDULE_WORKFLOWS; w++) {
      const made = await alice('POST', '/api/workflows', ONE_NODE(`Alice scheduled ${w}`));
      refuse('workflow', made.status);
      if (made.status >= 300) continue;
      for (let s = 0; s < SCHEDULES_EACH; s++)
        refuse(
          'schedule',
          (
            await alice('POST', `/api/workflows/${made.body!.data.id}/schedules`, {
              cron: '* * * * *',
              inputs: { text: 'tick' },
            })
          ).status,
        );
    }
    const slow: string[] = [];
    for (let w = 0; w < SLOW_WORKFLOWS; w++) {
      const made = await alice('POST', '/api/workflows', ONE_NODE(`Alice slow callbacks ${w}`));
      slow.push(made.body!.data.id);
      for (let c = 0; c < CALLBACKS_EACH; c++)
        refuse(
          'callback',
          (await alice('POST', `/api/workflows/${made.body!.data.id}/callbacks`, { url: `${receiver.url}/slow` }))
            .status,
        );
    }
    for (let round = 0; round < 3; round++)
      for (const id of slow)
        refuse('slow run', (await alice('POST', `/api/workflows/${id}/run`, { inputs: { text: 'x' } })).status);
    let stopping = false;
    const heavyRuns =
      heavy.status < 300
        ? Array.from({ length: 10 }, async () => {
            while (!stopping) {
              const run = await alice(
                'POST',
                `/api/workflows/${heavy.body!.data.id}/run`,
                { inputs: { text: 'x' } },
                { prefer: 'wait=60' },
              ).catch(() => null);
              if (!run) return; // the service stopped
              refuse('heavy run', run.status);
              if (run.status === 429) await new Promise((r) => setTimeout(r, 1000));
            }
          })
        : [];
    await new Promise((r) => setTimeout(r, 3000)); // the load is under way

    const loaded = {
      list: await list(),
      runs: await runs(),
      callback: await callbackDelay(bob, bobHooked, receiver.arrivals),
    };
    stopping = true;
    const ratio = (l: LoadResult, i: LoadResult) => ({ ratio: l.p50 / i.p50, target: 'p50 ≤ 2x idle, 0 errors' });
    bench.record(`11a. Bob's GET /api/workflows, idle (${CLIENTS} clients)`, idle.list);
    bench.record("11b. the same, under Alice's worst case (÷ 11a)", loaded.list, ratio(loaded.list, idle.list));
    bench.record(`11c. Bob's one-node runs, idle (${CLIENTS} clients)`, idle.runs);
    bench.record("11d. the same, under Alice's worst case (÷ 11c)", loaded.runs, ratio(loaded.runs, idle.runs));
    bench.record(`11e. Bob's run-ended callback delay, idle (${CALLBACK_SAMPLES} runs)`, idle.callback);
    bench.record(
      "11f. the same, under Alice's worst case (÷ 11e)",
      loaded.callback,
      ratio(loaded.callback, idle.callback),
    );
    console.error(
      `  11. what the service refused Alice: ${
        Object.entries(refused)
          .map(([k, n]) => `${n} × ${k}`)
          .join(', ') || 'nothing'
      }`,
    );
    await service.stop(); // ends Alice's runs and her held requests
    await Promise.allSettled(heavyRuns);
  } finally {
    await service.stop();
    await receiver.close();
  }
}

/** After row 8: the service it starts is its own; Alice's leftovers die with it. */
export const neighbourRows: RowGroup = { ids: ['11'], run: measureNeighbours };
