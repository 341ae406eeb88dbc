// A schedule fires once per tick however many processes run pg-boss's scheduler:
// two real worker processes (`src/worker.ts`) and the API's own pg-boss, all checking for due ticks
// every second (SCHEDULE_CHECK_INTERVAL_SECONDS=1), share one store and one queue; an every-minute
// schedule must start exactly one run per tick. Both stores at once (PostgreSQL, and MariaDB
// when TEST_MYSQL_URL is set), so the two ticks each needs are waited for only once. No speed is
// asserted: the waits are generous guards against a hang.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import type { Dialect } from '../../src/db/knex.ts';
import { testDialects } from '../support/db.ts';
import { TEST_SECRETS_KEY } from '../support/secrets.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { seedGraph } from '../support/seedWorkflow.ts';

interface Worker {
  child: ChildProcess;
  output: () => string;
}

function startWorker(server: TestServer): Worker {
  let text = '';
  const { BASE_URL: _ignored, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const env = {
    ...inherited,
    NODE_ENV: 'production',
    DATABASE_URL: server.databaseUrl,
    QUEUE_URL: server.queueUrl!,
    SECRETS_KEY: TEST_SECRETS_KEY,
    SCHEDULE_CHECK_INTERVAL_SECONDS: '1',
  };
  const child = spawn('sh', ['scripts/node.sh', 'src/worker.ts'], { env });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  return { child, output: () => text };
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * One store's case: the service, two workers, an every-minute schedule; resolves once two ticks
 * have come with how many runs it started, and the minute boundaries its watch spanned.
 */
async function twoTicks(dialect: Dialect): Promise<{ runs: number; boundaries: number }> {
  const server = await startTestServer({
    dialect,
    runs: { worker: false },
    env: { SCHEDULE_CHECK_INTERVAL_SECONDS: '1' },
  });
  const workers: Worker[] = [];
  try {
    const user = await createUser(server.ctx, { login: 'ticker', password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'ticker',
      name: 'ticks',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    const client: ApiClient = createApiClient(server.baseUrl, { bearer: token });
    workers.push(startWorker(server), startWorker(server));
    for (const w of workers)
      await until(
        'worker started',
        async () => w.output(),
        (text) => text.includes('worker started') || w.child.exitCode !== null,
        60_000,
      );
    for (const w of workers) expect(w.child.exitCode, w.output()).toBeNull();

    const wf = (await client.POST('/api/workflows', { body: { name: 'Every minute', ...seedGraph() } })).data!.data.id;
    const watchFrom = Date.now();
    const created = await client.POST('/api/workflows/{workflow_id}/schedules', {
      params: { path: { workflow_id: wf } },
      body: { cron: '* * * * *', inputs: { ticket: 'tick' } },
    });
    expect(created.response.status).toBe(201);

    const listRuns = async () =>
      (await client.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: wf } } })).data!.data;
    await until('two ticks', listRuns, (runs) => runs.length >= 2, 200_000);
    // A tick stays due for a while after it comes: give a late duplicate time to show.
    await new Promise((r) => setTimeout(r, 5_000));
    const runs = (await listRuns()).length;
    return { runs, boundaries: Math.floor(Date.now() / 60_000) - Math.floor(watchFrom / 60_000) };
  } finally {
    for (const w of workers) {
      const exited = w.child.exitCode === null ? once(w.child, 'exit') : Promise.resolve();
      w.child.kill('SIGTERM');
      await exited;
    }
    await server.close();
  }
}

it('two worker processes and the API fire an every-minute schedule once per tick, on every store', async () => {
  const results = await Promise.all(testDialects().map((dialect) => twoTicks(dialect)));
  for (const { runs, boundaries } of results) {
    // One run per tick: the ticks due while it was watched are the minute boundaries it crossed,
    // plus the minute it began in (a schedule's first tick, `missed: 'once'`, fires when it is
    // made). Counting ticks, not the minutes runs were created in: a tick taken a second before a
    // boundary may start its run just after it, in the same minute as the next tick's run.
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(boundaries + 1);
  }
}, 400_000);
