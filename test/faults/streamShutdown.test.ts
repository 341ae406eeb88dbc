// SIGTERM with event streams open: a real service process (`src/main.ts`, embedded
// PostgreSQL) holding streams of a run that has not ended ends each at once with a retry hint
// (`retry: 1000` and a `: reconnect` comment, so an EventSource reconnects with Last-Event-ID to
// another process) and exits 0, within its drain time. It used to wait the whole 20 s grace for
// the streams and exit 1.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, embeddedServiceEnv } from '../support/processes.ts';
import { bearer, createWorkflow, waitFor } from './support/fixtures.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Well inside the process's 20 s grace (lifecycle.ts), which it used to run out with streams open. */
const ENDS_WITHIN_MS = 10_000;

describe('SIGTERM with event streams open', () => {
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  let dataDir: string;
  let child: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    // No worker here: the run stays queued, and its streams stay open until the process stops.
    ({ env, baseUrl, dataDir } = await embeddedServiceEnv('fault-streams', { RUN_WORKER: 'false' }));
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'ends every open stream at once with retry: and a reconnect comment, and exits 0',
    { timeout: 120_000 },
    async () => {
      let output = '';
      child = spawn(process.execPath, ['src/main.ts'], { cwd: root, env });
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      await waitFor(
        `the service is ready\n${output}`,
        async () => (await fetch(`${baseUrl}/readyz`)).status === 200,
        90_000,
      );
      adminCli(
        env,
        'user',
        'create',
        '--login',
        'streamer',
        '--password',
        'correct horse battery',
        '--name',
        'Streamer',
      );
      const key = adminCli(
        env,
        'token',
        'create',
        '--user',
        'streamer',
        '--namespace',
        'streamer',
        '--name',
        'k',
        '--usage-scenario',
        'paid',
        '--permission',
        'workflows',
      ) as { token: string };
      const workflowId = await createWorkflow(baseUrl, key.token, 'echo');
      const started = await fetch(`${baseUrl}/api/workflows/${workflowId}/run`, {
        method: 'POST',
        headers: bearer(key.token, { 'content-type': 'application/json' }),
        body: JSON.stringify({ inputs: { ticket: 'never picked up' } }),
      });
      expect(started.status).toBe(202);
      const runId = ((await started.json()) as { data: { id: string } }).data.id;
      const streams = await Promise.all(
        [1, 2, 3].map(async () => {
          const res = await fetch(`${baseUrl}/api/workflows/${workflowId}/runs/${runId}/events`, {
            headers: bearer(key.token),
          });
          expect(res.status).toBe(200);
          return res;
        }),
      );

      const stoppedAt = Date.now();
      child.kill('SIGTERM');
      const bodies = await Promise.all(streams.map((res) => res.text().then((text) => ({ text, at: Date.now() }))));
      for (const body of bodies) {
        expect(body.text).toMatch(/^retry: 1000\n: reconnect\n\n$/m);
        expect(body.at - stoppedAt).toBeLessThan(ENDS_WITHIN_MS);
      }
      const code = await exited;
      expect(code, output).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(ENDS_WITHIN_MS);
    },
  );
});
