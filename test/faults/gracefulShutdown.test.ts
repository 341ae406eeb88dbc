// Graceful shutdown of the real service process (`src/main.ts`, embedded PostgreSQL, in-process
// worker) while work is in flight on a slow model provider: on SIGTERM the in-flight gateway
// request completes, the process exits 0, and every run accepted before the restart ends
// `completed` once a new process has started on the same data. None is lost.
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { adminCli, embeddedServiceEnv } from '../support/processes.ts';
import { bearer, createWorkflow, waitFor } from './support/fixtures.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PROVIDER_DELAY_MS = 3000;

interface Service {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

describe('graceful shutdown of the service process', () => {
  let fake: FakeOpenAI;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  const started: Service[] = [];

  function startService(): Service {
    let text = '';
    const child = spawn(process.execPath, ['src/main.ts'], { cwd: root, env });
    child.stdout!.on('data', (d) => (text += d));
    child.stderr!.on('data', (d) => (text += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const service = { child, output: () => text, exited };
    started.push(service);
    return service;
  }
  async function ready(service: Service): Promise<void> {
    await waitFor(
      `the service is ready (output: ${service.output()})`,
      async () => {
        if (service.child.exitCode !== null) throw new Error(`exited: ${service.output()}`);
        return (await fetch(`${baseUrl}/readyz`)).status === 200;
      },
      90_000,
    );
  }
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    ({ env, baseUrl, dataDir } = await embeddedServiceEnv('fault-shutdown', {
      MODEL_PROVIDER_BASE_URL: fake.baseUrl,
      MODEL_PROVIDER_MODELS: 'slow-model',
    }));
  }, 30_000);
  afterAll(async () => {
    for (const service of started) {
      if (service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGTERM');
        await service.exited;
      }
    }
    await fake?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes the in-flight request, exits 0 on SIGTERM, and completes every accepted run after a restart', async () => {
    const first = startService();
    await ready(first);
    adminCli(env, 'user', 'create', '--login', 'sigterm', '--password', 'correct horse battery', '--name', 'Sigterm');
    const key = adminCli(
      env,
      'token',
      'create',
      '--user',
      'sigterm',
      '--namespace',
      'sigterm',
      '--name',
      'k',
      '--usage-scenario',
      'paid',
      '--permission',
      'workflows',
    ) as { token: string };
    const workflowId = await createWorkflow(baseUrl, key.token, 'slow-model');
    fake.replies.push(
      ...Array.from({ length: 10 }, () => ({
        kind: 'completion' as const,
        content: 'slow answer',
        delayMs: PROVIDER_DELAY_MS,
      })),
    );

    const runIds: string[] = [];
    const postRun = async (ticket: string) => {
      const res = await fetch(`${baseUrl}/api/workflows/${workflowId}/run`, {
        method: 'POST',
        headers: bearer(key.token, { 'content-type': 'application/json' }),
        body: JSON.stringify({ inputs: { ticket } }),
      });
      expect(res.status).toBe(202);
      runIds.push(((await res.json()) as { data: { id: string } }).data.id);
    };
    await postRun('first');
    await waitFor('the run calls the provider', async () => fake.requests.length >= 1, 15_000);
    const inFlight = fetch(`${baseUrl}/serverless/v1/chat/completions`, {
      method: 'POST',
      headers: bearer(key.token, { 'content-type': 'application/json' }),
      body: JSON.stringify({ model: 'slow-model', messages: [{ role: 'user', content: 'take your time' }] }),
    });
    await waitFor('the gateway call reaches the provider', async () => fake.requests.length >= 2, 15_000);
    await postRun('second');

    first.child.kill('SIGTERM');
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(
      'slow answer',
    );
    const firstCode = await first.exited;
    if (firstCode !== 0) console.error(first.output());
    expect(firstCode).toBe(0);

    const second = startService();
    await ready(second);
    for (const runId of runIds) {
      await waitFor(
        `run ${runId} completed`,
        async () => {
          const res = await fetch(`${baseUrl}/api/workflows/${workflowId}/runs/${runId}`, {
            headers: bearer(key.token),
          });
          const run = ((await res.json()) as { data: { status: string } }).data;
          if (run.status === 'failed' || run.status === 'cancelled')
            throw new Error(`run ${runId} ended ${run.status}`);
          return run.status === 'completed';
        },
        60_000,
      );
    }
    second.child.kill('SIGTERM');
    expect(await second.exited, second.output()).toBe(0);
  }, 180_000);
});
