// A rolling deploy of two real service processes (`src/main.ts`) on one PostgreSQL store: the old
// one holds 50 `Prefer: wait` requests and 50 event streams of runs that have not ended (no
// worker runs yet) when it gets SIGTERM. It turns /readyz to 503 first, answers every wait at once with
// its run as it stands (202 + Location, as the contract allows for a wait that ran out), declines
// new waits, ends every stream with a reconnect hint, and exits 0 within its grace; the new process
// serves every Location, and a worker started afterwards finishes every run. (The waits used to be held until the 20 s grace ran
// out, cut with no answer, and the process exited 1.)
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, embeddedServiceEnv, freePort, waitForReady } from '../support/processes.ts';
import { TEST_SECRETS_KEY } from '../support/secrets.ts';
import { startOwnPostgres, type OwnDatabase } from './support/databases.ts';
import { bearer, createWorkflow, waitFor } from './support/fixtures.ts';
import { startWorker, type WorkerProcess } from './support/worker.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const HELD = 50;

/** The keys that appear twice in one object of a JSON text (JSON.parse keeps the last silently). */
function duplicateKeys(text: string): string[] {
  const found: string[] = [];
  const objects: Set<string>[] = [];
  const re = /"(?:[^"\\]|\\.)*"\s*:?|[{}]/g;
  for (const [token] of text.matchAll(re)) {
    if (token === '{') objects.push(new Set());
    else if (token === '}') objects.pop();
    else if (token.endsWith(':')) {
      const key = token.slice(0, token.lastIndexOf('"') + 1);
      const keys = objects.at(-1);
      if (keys?.has(key)) found.push(key);
      keys?.add(key);
    }
  }
  return found;
}

interface Service {
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

describe('rolling deploy with 50 waits and 50 event streams open', () => {
  let database: OwnDatabase;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  const started: Service[] = [];
  let worker: WorkerProcess | undefined;

  async function startService(extra: Record<string, string>): Promise<Service> {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    let text = '';
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: root,
      env: { ...env, PORT: String(port), BASE_URL: baseUrl, ...extra },
    });
    child.stdout!.on('data', (d) => (text += d));
    child.stderr!.on('data', (d) => (text += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const service = { baseUrl, child, output: () => text, exited };
    started.push(service);
    await waitForReady(`${baseUrl}/readyz`, child, service.output);
    return service;
  }

  beforeAll(async () => {
    database = await startOwnPostgres();
    ({ env, dataDir } = await embeddedServiceEnv('fault-rolling', {
      DATABASE_URL: database.url,
      SECRETS_KEY: TEST_SECRETS_KEY,
      USER_MAX_CONCURRENT_RUNS: '1000',
      USER_RUNS_PER_MINUTE: '1000',
      WAITS_PER_KEY: '200',
      WAITS_PER_USER: '200',
      EVENT_STREAMS_PER_KEY: '200',
      EVENT_STREAMS_PER_USER: '200',
      API_RATE_LIMIT_PER_MINUTE: '100000',
      SHUTDOWN_GRACE_SECONDS: '30',
    }));
  }, 120_000);
  afterAll(async () => {
    for (const service of [...started, ...(worker ? [worker] : [])]) {
      if (service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGKILL');
        await service.exited;
      }
    }
    await database?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'answers every wait at once with 202 + Location, ends every stream, refuses new work by readiness, and exits 0',
    { timeout: 240_000 },
    async () => {
      // No process executes runs yet: every run stays queued, so no wait ends by itself.
      const old = await startService({ RUN_WORKER: 'false', SHUTDOWN_DRAIN_SECONDS: '10' });
      adminCli(env, 'user', 'create', '--login', 'roller', '--password', 'correct horse battery', '--name', 'Roller');
      const key = adminCli(
        env,
        'token',
        'create',
        '--user',
        'roller',
        '--namespace',
        'roller',
        '--name',
        'k',
        '--usage-scenario',
        'paid',
        '--permission',
        'workflows',
      ) as { token: string };
      const workflowId = await createWorkflow(old.baseUrl, key.token, 'echo');
      const json = bearer(key.token, { 'content-type': 'application/json' });
      const runs = `/api/workflows/${workflowId}/runs`;

      // 50 run starts that wait (up to 60 s) for their run's end.
      const waits = Array.from({ length: HELD }, (_, i) =>
        fetch(`${old.baseUrl}/api/workflows/${workflowId}/run`, {
          method: 'POST',
          headers: { ...json, prefer: 'wait=60' },
          body: JSON.stringify({ inputs: { ticket: `w${i}` } }),
        }).then(async (res) => ({
          res,
          body: (await res.json()) as { data: { id: string; status: string } },
        })),
      );
      const listed = async () =>
        (
          (await (await fetch(`${old.baseUrl}${runs}?per_page=100`, { headers: bearer(key.token) })).json()) as {
            data: { id: string }[];
          }
        ).data;
      await waitFor('every waiting start has queued its run', async () => (await listed()).length === HELD, 60_000);
      // 50 event streams of those runs, open (their headers are sent at once).
      const runIds = (await listed()).map((r) => r.id);
      const streams = await Promise.all(
        runIds.map(async (runId) => {
          const res = await fetch(`${old.baseUrl}${runs}/${runId}/events`, { headers: bearer(key.token) });
          expect(res.status).toBe(200);
          return res;
        }),
      );

      // The new version is up before the old one is told to stop.
      const next = await startService({ RUN_WORKER: 'false' });
      old.child.kill('SIGTERM');

      const first = await Promise.race(waits);
      // Within the old process's drain (SHUTDOWN_DRAIN_SECONDS): readiness already refuses new work,
      // and a new wait is declined (answered at once, as without one) while requests are still served.
      const ready = await fetch(`${old.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBeTruthy();
      expect(await ready.json()).toMatchObject({ status: 'unavailable', checks: { shutdown: 'unavailable' } });
      const late = await fetch(`${old.baseUrl}/api/workflows/${workflowId}/run`, {
        method: 'POST',
        headers: { ...json, prefer: 'wait=60' },
        body: JSON.stringify({ inputs: { ticket: 'late' } }),
      });
      expect(late.status).toBe(202);
      expect(late.headers.get('preference-applied')).toBeNull();
      const lateRun = ((await late.json()) as { data: { id: string } }).data.id;
      expect(first.res.status).toBe(202);

      const answered = await Promise.all(waits);
      const locations: string[] = [];
      for (const { res, body } of answered) {
        expect(res.status).toBe(202);
        expect(body.data.status).toBe('queued');
        const location = res.headers.get('location');
        expect(location).toBe(`${runs}/${body.data.id}`);
        locations.push(location!);
      }
      for (const stream of streams) expect(await stream.text()).toMatch(/retry: 1000\n: reconnect\n\n$/);

      const code = await old.exited;
      expect(code, old.output()).toBe(0);

      // The new process serves every Location, and every run accepted by the old one completes.
      worker = await startWorker({ DATABASE_URL: database.url });
      for (const location of [...locations, `${runs}/${lateRun}`]) {
        await waitFor(
          `${location} completed`,
          async () => {
            const res = await fetch(`${next.baseUrl}${location}`, {
              headers: { ...bearer(key.token), prefer: 'wait=30' },
            });
            const run = ((await res.json()) as { data: { status: string } }).data;
            if (run.status === 'failed' || run.status === 'cancelled')
              throw new Error(`${location} ended ${run.status}`);
            return run.status === 'completed';
          },
          90_000,
        );
      }
      next.child.kill('SIGTERM');
      expect(await next.exited, next.output()).toBe(0);
      worker.child.kill('SIGTERM');
      expect(await worker.exited, worker.output()).toBe(0);
      // Every JSON line the processes wrote has each key once (the worker's start line had two "pid").
      const lines = [old, next, worker].flatMap((p) => p.output().split('\n')).filter((l) => l.startsWith('{'));
      expect(lines.some((l) => l.includes('worker started'))).toBe(true);
      for (const line of lines) expect(duplicateKeys(line), line).toEqual([]);
    },
  );
});
