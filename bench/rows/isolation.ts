// Row 8 of `npm run bench`: what one user's heavy runs cost another user. The other
// user's GET /api/workflows and one-node runs (`Prefer: wait`), each measured idle and then while a
// heavy user keeps 10 runs of a 98-node chain of busy templates in flight (the audit's starvation
// load: it took the other user's list from 8 ms to 6.5 s and their run from 14 ms to 10.5 s).
// The ratio column is the loaded p50 over the idle one (the goal: within 2x).
import { adminCli } from '../../test/support/processes.ts';
import type { Bench, RowGroup } from '../bench.ts';
import type { LoadResult } from '../types.ts';

const BUSY = '{% for i in (1..300000) %}{% endfor %}{{ nodes.PREV.output }}';
const HEAVY_RUNS = 10;
/** The other user's clients: a few, so the row measures latency, not the service's throughput. */
const CLIENTS = 4;

function chainOfTemplates(length: number) {
  const ids = Array.from({ length }, (_, i) => `t${i + 1}`);
  return {
    name: 'Bench heavy chain',
    nodes: [
      { id: 'in', type: 'text_input', config: { variable: 'text' } },
      ...ids.map((id, i) => ({
        id,
        type: 'template',
        config: { template: BUSY.replace('PREV', i === 0 ? 'in' : ids[i - 1]!) },
      })),
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: ['in', ...ids].map((from, i) => ({ from, to: ids[i] ?? 'out' })),
  };
}

const ONE_NODE = {
  name: 'Bench one node',
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [{ from: 'in', to: 'out' }],
};

function userKey(env: NodeJS.ProcessEnv, login: string): string {
  adminCli(env, 'user', 'create', '--login', login, '--password', 'neighbour-passphrase-1', '--name', login);
  const key = adminCli(
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
  );
  return key.token as string;
}

async function createWorkflow(baseUrl: string, key: string, body: unknown): Promise<string> {
  const res = await fetch(`${baseUrl}/api/workflows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`creating a workflow failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

/** Keeps HEAVY_RUNS runs of the heavy chain in flight until stopped (which cancels them); counts how they ended. */
function heavyLoad(baseUrl: string, key: string, workflowId: string) {
  let stopping = false;
  const ended: Record<string, number> = {};
  const current = new Set<string>();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const runUrl = (id: string) => `${baseUrl}/api/workflows/${workflowId}/runs/${id}`;
  const loop = async () => {
    while (!stopping) {
      const res = await fetch(`${baseUrl}/api/workflows/${workflowId}/run`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ inputs: { text: 'load' } }),
      });
      if (res.status !== 202) throw new Error(`a heavy run was refused: ${res.status} ${await res.text()}`);
      const id = ((await res.json()) as { data: { id: string } }).data.id;
      current.add(id);
      if (stopping) await fetch(`${runUrl(id)}/cancel`, { method: 'POST', headers }); // started while stop() was cancelling
      for (;;) {
        const run = (
          (await (await fetch(runUrl(id), { headers: { ...headers, prefer: 'wait=60' } })).json()) as {
            data: { finished_at: string | null; status: string; error: { code: string } | null };
          }
        ).data;
        if (run.finished_at === null) continue;
        const outcome = run.error?.code ?? run.status;
        ended[outcome] = (ended[outcome] ?? 0) + 1;
        break;
      }
      current.delete(id);
    }
  };
  const loops = Array.from({ length: HEAVY_RUNS }, loop);
  return {
    ended,
    async stop() {
      stopping = true;
      await Promise.all([...current].map((id) => fetch(`${runUrl(id)}/cancel`, { method: 'POST', headers })));
      await Promise.all(loops);
    },
  };
}

async function measureIsolation(bench: Bench): Promise<void> {
  const { baseUrl, env } = bench.service;
  const { durationSeconds } = bench.common;
  const heavyKey = userKey(env, 'heavy');
  const otherKey = userKey(env, 'other');
  const heavy = await createWorkflow(baseUrl, heavyKey, chainOfTemplates(98));
  const oneNode = await createWorkflow(baseUrl, otherKey, ONE_NODE);
  const common = { connections: CLIENTS, durationSeconds };
  const list = () =>
    bench.load({
      kind: 'fixed',
      ...common,
      url: `${baseUrl}/api/workflows?per_page=20`,
      method: 'GET',
      headers: { authorization: `Bearer ${otherKey}` },
      subMillisecond: true,
    });
  const runs = () =>
    bench.load({
      kind: 'runs',
      ...common,
      baseUrl,
      apiKey: otherKey,
      workflowId: oneNode,
      inputs: { text: 'hello' },
      pollMs: 5,
      waitSeconds: 30,
    });

  await runs(); // warm-up, not recorded
  const idleList = await list();
  const idleRuns = await runs();
  const load = heavyLoad(baseUrl, heavyKey, heavy);
  await new Promise((r) => setTimeout(r, 2000)); // the heavy runs are under way
  const loadedList = await list();
  const loadedRuns = await runs();
  await load.stop();
  const ratio = (loaded: LoadResult, idle: LoadResult) => loaded.p50 / idle.p50;
  bench.record(`8a. other user's GET /api/workflows, idle (${CLIENTS} clients)`, idleList);
  bench.record(`8b. the same, under ${HEAVY_RUNS} heavy runs (÷ 8a)`, loadedList, {
    ratio: ratio(loadedList, idleList),
    target: 'p50 ≤ 2x idle',
  });
  bench.record(`8c. other user's one-node runs, idle (${CLIENTS} clients)`, idleRuns);
  bench.record(`8d. the same, under ${HEAVY_RUNS} heavy runs (÷ 8c)`, loadedRuns, {
    ratio: ratio(loadedRuns, idleRuns),
    target: 'p50 ≤ 2x idle',
  });
  const outcomes = Object.entries(load.ended)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  console.error(`  8. heavy runs ended: ${outcomes || 'none yet'}`);
}

/** Last in the list: the heavy runs' compute processes keep a core busy until cancelled. */
export const isolationRows: RowGroup = { ids: ['8'], run: measureIsolation };
