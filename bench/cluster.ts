// Row 10's deployment: 2 API processes (`src/main.ts` with RUN_WORKER=false) and 2 worker processes
// (`src/worker.ts`, as `npm run worker` starts them) sharing one store, as docs/operating.md's scaling
// section describes. The store and the queue are databases of their own (on the bench's MariaDB
// and PostgreSQL) so that the bench's main service, which executes runs itself, takes no job of
// theirs.
import { once } from 'node:events';
import { adminCli } from '../test/support/processes.ts';
import {
  freshMysqlDatabase,
  freshPgDatabase,
  spawnNode,
  startService,
  onCleanup,
  type Service,
  type Stores,
} from './processes.ts';

const WORKER_START_MS = 60_000;

export interface Cluster {
  apis: [Service, Service];
  workerPids: number[];
  /** Stops the four processes (they would idle through the rows after). */
  stop(): Promise<void>;
  /** An API key (permission workflows) of a user made through the admin CLI. */
  apiKey: string;
}

/**
 * A worker process, waited for until it logs its start. At LOG_LEVEL=info (the default of `npm run
 * worker`): its start line is how the bench knows it is up.
 */
async function startWorker(env: NodeJS.ProcessEnv): Promise<{ pid: number; stop(): Promise<void> }> {
  let text = '';
  const child = spawnNode(['src/worker.ts'], { env: { ...env, LOG_LEVEL: 'info' } });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
    const problems = text.split('\n').filter((l) => /"level":(50|60)/.test(l));
    if (problems.length)
      console.error(`a worker logged ${problems.length} errors, e.g.:\n${problems.slice(0, 3).join('\n')}`);
  };
  onCleanup(stop);
  const deadline = Date.now() + WORKER_START_MS;
  while (!text.includes('worker started')) {
    if (child.exitCode !== null) throw new Error(`a worker exited with ${child.exitCode}:\n${text}`);
    if (Date.now() > deadline) throw new Error(`a worker did not start within ${WORKER_START_MS / 1000} s:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { pid: child.pid!, stop };
}

export async function startCluster(stores: Stores): Promise<Cluster> {
  const mysqlServer = new URL(stores.databaseUrl);
  mysqlServer.pathname = '/';
  const own: Stores = {
    ...stores,
    databaseUrl: await freshMysqlDatabase(mysqlServer.toString(), 'bench_scale'),
    queueUrl: await freshPgDatabase(stores.queueUrl, 'bench_scale_queue'),
  };
  // The first API process migrates the store; the others share its SECRETS_KEY.
  const first = await startService(own, { env: { RUN_WORKER: 'false' } });
  const shared = { RUN_WORKER: 'false', SECRETS_KEY: first.env.SECRETS_KEY! };
  const [second, ...workers] = await Promise.all([
    startService(own, { env: shared }),
    startWorker(first.env),
    startWorker(first.env),
  ]);
  adminCli(first.env, 'user', 'create', '--login', 'scale', '--password', 'bench-password-1', '--name', 'Scale User');
  const key = adminCli(
    first.env,
    'token',
    'create',
    '--user',
    'scale',
    '--namespace',
    'scale',
    '--name',
    'scale key',
    '--usage-scenario',
    'paid',
    '--permission',
    'workflows',
  ) as { token: string };
  const stop = async () => {
    await Promise.all([first.stop(), second.stop(), ...workers.map((w) => w.stop())]);
  };
  return { apis: [first, second], workerPids: workers.map((w) => w.pid), stop, apiKey: key.token };
}
