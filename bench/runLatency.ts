// Run latency: POST /run of the seed's three-node example on `echo`, then polling GET until
// `completed`, measured end to end through HTTP, the queue (LISTEN/NOTIFY wake-up) and a worker.
//   [DATABASE_URL=... QUEUE_URL=...] sh scripts/node.sh bench/runLatency.ts [runs]
// Same configuration as `npm start` (embedded PostgreSQL when DATABASE_URL is unset: stop
// `npm start` first, or set DATA_DIR and EMBEDDED_PG_PORT). Creates a throw-away user; prints
// p50 / p90 / max in milliseconds.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createApiClient } from '../client/src/index.ts';
import { loadConfig } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { openDatabase, resolveQueueUrl } from '../src/db/connect.ts';
import { createApp } from '../src/app.ts';
import { createLogger } from '../src/http/logger.ts';
import { createAccessToken } from '../src/accounts/accessTokens.ts';
import { createUser } from '../src/accounts/users.ts';
import { startRunMachinery } from '../src/machinery.ts';

const count = Number(process.argv[2] ?? 50);
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const logger = createLogger({ level: 'warn' });
const database = await openDatabase(config);
const queueUrl = resolveQueueUrl(config, database);
if (!queueUrl) throw new Error('set QUEUE_URL: the store is MySQL');
const ctx: AppContext = { config, db: database.db, logger, sealer: database.sealer, now: Date.now };
ctx.runs = await startRunMachinery(ctx, { queueUrl, worker: true });
const server = createApp(ctx).listen(0, '127.0.0.1');
await once(server, 'listening');
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const login = `bench${randomBytes(4).toString('hex')}`;
const user = await createUser(database, { login, password: randomBytes(16).toString('hex') });
const { token } = await createAccessToken(database, {
  userId: user.id,
  namespace: login,
  name: 'bench',
  usageScenario: 'paid',
  permissions: ['workflows'],
});
const api = createApiClient(baseUrl, { bearer: token });
const { data: created } = await api.POST('/api/workflows', {
  body: {
    name: 'bench',
    nodes: [
      { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
      { id: 'summarise', type: 'llm_call', config: { model: 'echo' } },
      { id: 'result', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'input', to: 'summarise' },
      { from: 'summarise', to: 'result' },
    ],
  },
});
const workflowId = created!.data.id;

const times: number[] = [];
for (let i = 0; i < count; i++) {
  const t0 = performance.now();
  const { data } = await api.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: workflowId } },
    body: { inputs: { ticket: `bench ${i}` } },
  });
  const path = { workflow_id: workflowId, run_id: data!.data.id };
  for (;;) {
    const run = (await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).data!.data;
    if (run.status === 'completed') break;
    if (run.status !== 'queued' && run.status !== 'running') throw new Error(`run ended ${run.status}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  times.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 20)); // let the worker go idle: measure the wake-up, not a busy loop
}
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
console.log(
  `${count} runs of the seed example on echo, POST to completed: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`,
);

server.close();
await ctx.runs.stop();
await database.close();
