// Recovery (DESIGN.md "Run states": no accepted run is ever lost). A real `npm run worker`
// process takes a run whose llm_call hangs, is killed with SIGKILL, and the run is finished by
// another worker once pg-boss notices the missed heartbeats; on the last attempt it fails clearly.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createRunner, sweepStuckRuns } from './runner.ts';
import { newRunId } from './service.ts';
import { runsStore } from './runsStore.ts';
import * as store from './store.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { TEST_SECRETS_KEY } from '../../test/support/secrets.ts';

type Run = Schemas['RunDetail'];

function startWorkerProcess(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let text = '';
  const { BASE_URL: _ignored, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const child = spawn('sh', ['scripts/node.sh', 'src/worker.ts'], {
    env: { ...inherited, NODE_ENV: 'test', LOG_LEVEL: 'info', SECRETS_KEY: TEST_SECRETS_KEY, ...env },
  });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  return { child, output: () => text };
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(testDialects())('run recovery on %s', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: ApiClient;
  let aliceId: number;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // The API process queues and supervises (pg-boss monitor) but executes nothing itself.
    server = await startTestServer({
      dialect,
      runs: { worker: false },
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    const user = await createUser(server.ctx, { login: 'alice', password: 'correct horse battery' });
    aliceId = user.id;
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'alice',
      name: 'k',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    alice = createApiClient(server.baseUrl, { bearer: token });
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await server?.close();
    await fake?.close();
  });

  it(
    'a run whose worker process is killed (SIGKILL) mid-run is completed by another worker within ~40 s',
    { timeout: 90_000 },
    async () => {
      const created = await alice.POST('/api/workflows', {
        body: {
          name: 'recover me',
          ...seedGraph('llama-3'),
        },
      });
      const workflowId = created.data!.data.id;

      const worker = startWorkerProcess({
        DATABASE_URL: server.databaseUrl,
        QUEUE_URL: server.queueUrl!,
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'llama-3',
      });
      children.push(worker.child);
      await until(
        async () => (worker.output().includes('worker started') ? true : undefined),
        30_000,
        `worker start\n${worker.output()}`,
      );

      fake.replies = [{ kind: 'hang' }]; // the first call never answers; the retry's call gets an answer
      const before = fake.requests.length;
      const started = await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId } },
        body: { inputs: { ticket: 'survive' } },
      });
      const runId = started.data!.data.id;
      await until(
        async () => (fake.requests.length > before ? true : undefined),
        10_000,
        'the worker calling the provider',
      );
      const get = async () =>
        (
          await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
            params: { path: { workflow_id: workflowId, run_id: runId } },
          })
        ).data!.data as Run;
      expect((await get()).status).toBe('running');

      worker.child.kill('SIGKILL');
      const killedAt = Date.now();
      await until(
        async () => (worker.child.exitCode !== null || worker.child.signalCode !== null ? true : undefined),
        5_000,
        'worker exit',
      );

      // Another worker: the API process starts executing runs too.
      await server.ctx.runs!.startWorker();
      const run = await until(
        async () => {
          const r = await get();
          return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
        },
        45_000,
        'the run finishing after its worker died',
      );
      expect(Date.now() - killedAt).toBeLessThan(40_000);
      expect(run).toMatchObject({ status: 'completed', output: { result: 'SURVIVE' }, error: null });
      // The retry re-ran the graph from scratch: one log per node, all from the second attempt.
      expect(run.logs.map((s) => [s.node_id, s.status])).toEqual([
        ['input', 'completed'],
        ['summarise', 'completed'],
        ['result', 'completed'],
      ]);
      expect((await store.findRun(server.ctx.db, runId))!.attempts).toBe(2);
    },
  );

  /** A run row as a crashed process would leave it. */
  async function insertStuckRun(status: 'queued' | 'running', at: number): Promise<{ id: string; workflowId: string }> {
    const workflow = (await alice.GET('/api/workflows')).data!.data[0]!;
    const id = newRunId();
    await runsStore(server.ctx.db).start({
      id,
      workflow_id: workflow.id,
      user_id: aliceId,
      status,
      inputs: JSON.stringify({ ticket: 'swept' }),
      graph: JSON.stringify({ version: 1, nodes: workflow.nodes, edges: workflow.edges }),
      output: null,
      error: null,
      usage: null,
      idempotency_key: null,
      attempts: status === 'running' ? 1 : 0,
      created_at: at,
      started_at: status === 'running' ? at : null,
      finished_at: null,
      duration_ms: null,
    });
    return { id, workflowId: workflow.id };
  }

  it('a run still held by a lost worker on the last delivery fails with worker_lost', async () => {
    const { id, workflowId } = await insertStuckRun('running', Date.now());
    const workflow = { id: workflowId };
    const runner = createRunner(
      { ...server.ctx, config: { ...server.ctx.config, RUN_TIMEOUT_SECONDS: 5 } },
      server.ctx.runs!.models,
    );
    await runner.handle(id, { retryCount: 2, lastAttempt: true, signal: new AbortController().signal });
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflow.id, run_id: id } },
    });
    expect(data!.data).toMatchObject({ status: 'failed', error: { code: 'worker_lost', node_id: null } });
    expect(data!.data.finished_at).not.toBeNull();
  });

  it('the sweep enqueues a run stored but never enqueued (API died in between), and fails a running run long past its timeout', async () => {
    const old = Date.now() - 10 * 60_000;
    const orphan = await insertStuckRun('queued', old);
    const abandoned = await insertStuckRun('running', old);
    await sweepStuckRuns(server.ctx, server.ctx.runs!.queue);
    await sweepStuckRuns(server.ctx, server.ctx.runs!.queue); // the queue keeps one job per run: a second sweep adds nothing
    const get = async (r: { id: string; workflowId: string }) =>
      (
        await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
          params: { path: { workflow_id: r.workflowId, run_id: r.id } },
        })
      ).data!.data;
    const done = await until(
      async () => {
        const r = await get(orphan);
        return r.status === 'completed' ? r : undefined;
      },
      10_000,
      'the swept run completing',
    );
    expect(done.output).toEqual({ result: 'SWEPT' });
    expect((await store.findRun(server.ctx.db, orphan.id))!.attempts).toBe(1);
    expect(await get(abandoned)).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
  });
});
