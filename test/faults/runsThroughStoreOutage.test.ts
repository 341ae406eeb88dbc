// Runs through a store outage. Runs wait on a slow model (a local server of
// ours speaking the OpenAI wire format) while the store's server is stopped for a few seconds and
// started again: every run must still complete, with every step closed. Runs that do end without
// an attempt left carry the true cause of their job's last failure (`store_unavailable`, or
// `worker_lost` only when a worker went silent), and the sweeper fails them within seconds of
// their job ending, whatever RUN_TIMEOUT_SECONDS is.
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_QUEUE, STORE_UNAVAILABLE } from '../../src/runs/queue.ts';
import { sweepStuckRuns } from '../../src/runs/runner.ts';
import { newRunId } from '../../src/runs/service.ts';
import { runsStore } from '../../src/runs/runsStore.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { mariadbAvailable, startOwnMariaDb, startOwnPostgres, type OwnDatabase } from './support/databases.ts';
import { apiKeyFor, bearer, createWorkflow, seedGraph, sleep, waitFor } from './support/fixtures.ts';

interface RunBody {
  id: string;
  status: string;
  output: Record<string, unknown> | null;
  error: { code: string } | null;
  logs: { node_id: string; status: string; finished_at: string | null }[];
}

const kinds = [
  ['PostgreSQL (embedded)', startOwnPostgres] as const,
  ...(mariadbAvailable() ? [['MariaDB', startOwnMariaDb] as const] : []),
];

describe.each(kinds)('runs through a store outage on %s', (_name, startDatabase) => {
  let database: OwnDatabase;
  let queueDb: TestDb;
  let fake: FakeOpenAI;
  let server: TestServer;
  let apiKey: string;
  let workflowId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    database = await startDatabase();
    // The queue lives elsewhere (as QUEUE_URL in production): only the store goes away.
    queueDb = await createTestDb('pg', { migrate: false });
    server = await startTestServer({
      databaseUrl: database.url,
      runs: true,
      queueUrl: queueDb.url,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'slow-model' },
    });
    apiKey = (await apiKeyFor(server.ctx.db)).token;
    workflowId = await createWorkflow(server.baseUrl, apiKey, 'slow-model');
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await database?.destroy();
    await queueDb?.destroy();
    await fake?.close();
  });

  const getRun = async (runId: string): Promise<RunBody> => {
    const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}`, { headers: bearer(apiKey) });
    if (res.status !== 200) throw new Error(`GET run: ${res.status}`);
    return ((await res.json()) as { data: RunBody }).data;
  };

  it('a store outage of a few seconds while runs wait on a slow model costs no run: all complete, every step closed', async () => {
    const runs = 4;
    // Twice as many replies as runs: a step whose end could not be written in the outage runs again
    // on the job's next delivery (at least once), and that second model call gets an answer too.
    fake.replies = Array.from({ length: 2 * runs }, (_, i) => ({
      kind: 'completion' as const,
      content: `answer ${i}`,
      delayMs: 3_000,
    }));
    const before = fake.requests.length;
    const ids: string[] = [];
    for (let i = 0; i < runs; i++) {
      const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/run`, {
        method: 'POST',
        headers: bearer(apiKey, { 'content-type': 'application/json' }),
        body: JSON.stringify({ inputs: { ticket: `ticket ${i}` } }),
      });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { data: { id: string } }).data.id);
    }
    await waitFor('every run waiting on the model', async () => fake.requests.length - before >= runs, 30_000);

    // The model answers while the store is down: the step ends and the run's end must wait for it.
    await database.stop();
    await sleep(5_000);
    await database.start();

    for (const id of ids) {
      await waitFor(
        `run ${id} ended`,
        async () => ['completed', 'failed', 'cancelled'].includes((await getRun(id)).status),
        120_000,
      );
      const run = await getRun(id);
      expect(run, JSON.stringify(run)).toMatchObject({ status: 'completed', error: null });
      expect(String(Object.values(run.output ?? {})[0])).toMatch(/^answer \d$/);
      expect(run.logs.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
      expect(run.logs.every((s) => s.finished_at !== null)).toBe(true);
    }
  }, 240_000);

  describe('runs left without an attempt', () => {
    let boss: PgBoss;
    beforeAll(async () => {
      boss = new PgBoss({ connectionString: queueDb.url, schema: 'pgboss', supervise: false, schedule: false });
      boss.on('error', () => {});
      await boss.start();
    });
    afterAll(async () => {
      await boss?.stop({ graceful: false });
    });

    /**
     * A run `running` since 15 s with one step left open, as an attempt that never came back leaves
     * it. Its job is made first: the server's own sweeper (every few seconds) would otherwise find
     * the run with no job at all and fail it `worker_lost` before the test gives it one.
     */
    async function abandonedRun(giveJob: (id: string) => Promise<void>): Promise<string> {
      const id = newRunId();
      await giveJob(id);
      const at = Date.now() - 15_000;
      await runsStore(server.ctx.db).start({
        id,
        workflow_id: workflowId,
        user_id: (await server.ctx.db('workflows').where({ id: workflowId }).first()).user_id,
        status: 'running',
        inputs: JSON.stringify({ ticket: 'lost' }),
        graph: JSON.stringify({ version: 1, ...seedGraph('slow-model') }),
        output: null,
        error: null,
        usage: null,
        idempotency_key: null,
        attempts: 1,
        created_at: at,
        started_at: at,
        finished_at: null,
        duration_ms: null,
      });
      await runsStore(server.ctx.db).appendSteps([
        {
          run_id: id,
          node_id: 'input',
          node_type: 'text_input',
          status: 'running',
          started_at: at,
          finished_at: null,
          input_preview: null,
          output_preview: null,
          output_json: false,
          truncated: false,
          usage: null,
          error: null,
        },
      ]);
      return id;
    }

    /** Gives the run a job that pg-boss failed for good with `output`, as it does after the last delivery. */
    async function failedJob(runId: string, output: object): Promise<void> {
      await boss.send(RUN_QUEUE, { runId }, { singletonKey: runId, retryLimit: 0, startAfter: 3600 });
      const [job] = await boss.findJobs(RUN_QUEUE, { key: runId });
      await boss.fail(RUN_QUEUE, job!.id, output);
    }

    const sweep = () => sweepStuckRuns(server.ctx, server.ctx.runs!.queue);

    it('fails a run whose job ran out of deliveries in a store outage with store_unavailable, closing its steps, long before RUN_TIMEOUT_SECONDS', async () => {
      const runId = await abandonedRun((id) =>
        failedJob(id, {
          name: 'StoreUnavailable',
          code: STORE_UNAVAILABLE,
          message: 'The store could not be reached: connect ECONNREFUSED',
        }),
      );
      await sweep();
      const run = await getRun(runId);
      expect(run).toMatchObject({ status: 'failed', error: { code: 'store_unavailable' } });
      expect(run.logs).toMatchObject([{ node_id: 'input', status: 'failed' }]);
      expect(run.logs[0]!.finished_at).not.toBeNull();
    });

    it('fails a run whose worker went silent on the last delivery with worker_lost', async () => {
      const runId = await abandonedRun((id) => failedJob(id, { value: { message: 'job heartbeat timeout' } }));
      await sweep();
      expect(await getRun(runId)).toMatchObject({
        status: 'failed',
        error: { code: 'worker_lost' },
        logs: [{ status: 'failed' }],
      });
    });

    it('leaves a run alone while its job is still queued or held', async () => {
      const runId = await abandonedRun(
        async (id) => void (await boss.send(RUN_QUEUE, { runId: id }, { singletonKey: id, startAfter: 3600 })),
      );
      await sweep();
      expect((await getRun(runId)).status).toBe('running');
      await server.ctx.db('runs').where({ id: runId }).delete();
    });
  });
});
