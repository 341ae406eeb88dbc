// Step-level durability: a run whose worker process is killed (SIGKILL) mid-run is
// taken over by another worker, which resumes after the last node the store has finished. Counted
// in the model provider's own log (a local server of ours speaking the OpenAI wire format): the
// finished node's provider call is made exactly once; the node that was mid-call when the worker
// died is called again (its own retry). On a PostgreSQL and a MariaDB store of the test's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { mariadbAvailable, startOwnMariaDb, startOwnPostgres, type OwnDatabase } from './support/databases.ts';
import { apiKeyFor, bearer, waitFor } from './support/fixtures.ts';
import { startWorker, type WorkerProcess } from './support/worker.ts';

interface RunBody {
  status: string;
  started_at: string | null;
  finished_at: string | null;
  duration: number | null;
  output: Record<string, unknown> | null;
  usage: { total_tokens: number } | null;
  logs: {
    node_id: string;
    status: string;
    started_at: string | null;
    output: string | null;
    usage: { total_tokens: number } | null;
  }[];
}

/** text_input -> first (llm_call) -> second (llm_call) -> result: two paid calls in a row. */
const graph = {
  nodes: [
    { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'first', type: 'llm_call', config: { model: 'paid-model', system_prompt: 'first step' } },
    { id: 'second', type: 'llm_call', config: { model: 'paid-model', system_prompt: 'second step' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'input', to: 'first' },
    { from: 'first', to: 'second' },
    { from: 'second', to: 'result' },
  ],
};

const kinds = [
  ['PostgreSQL', startOwnPostgres] as const,
  ...(mariadbAvailable() ? [['MariaDB', startOwnMariaDb] as const] : []),
];

describe.each(kinds)(
  'a run whose worker is killed mid-run resumes after its finished nodes, on a %s store',
  (_name, startDatabase) => {
    let database: OwnDatabase;
    let queueDb: TestDb;
    let fake: FakeOpenAI;
    let server: TestServer;
    let worker: WorkerProcess | undefined;

    beforeAll(async () => {
      fake = await startFakeOpenAI();
      database = await startDatabase();
      queueDb = await createTestDb('pg', { migrate: false });
      // The API process queues and supervises (pg-boss's monitor) but executes nothing until told.
      server = await startTestServer({
        databaseUrl: database.url,
        queueUrl: queueDb.url,
        runs: { worker: false },
        env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'paid-model' },
      });
    }, 120_000);
    afterAll(async () => {
      if (worker?.child.exitCode === null) worker.child.kill('SIGKILL');
      await server?.close();
      await database?.destroy();
      await queueDb?.destroy();
      await fake?.close();
    });

    it(
      "calls the finished node's provider exactly once, and the node that was mid-call again",
      { timeout: 60_000 },
      async () => {
        const { token } = await apiKeyFor(server.ctx.db, 'resume');
        const created = await fetch(`${server.baseUrl}/api/workflows`, {
          method: 'POST',
          headers: bearer(token, { 'content-type': 'application/json' }),
          body: JSON.stringify({ name: 'two paid calls', ...graph }),
        });
        expect(created.status).toBe(201);
        const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
        worker = await startWorker({
          DATABASE_URL: database.url,
          QUEUE_URL: queueDb.url,
          MODEL_PROVIDER_BASE_URL: fake.baseUrl,
          MODEL_PROVIDER_MODELS: 'paid-model',
        });

        // The first call answers; the second never does: the worker dies waiting on it.
        fake.replies = [
          { kind: 'completion', content: 'first answer' },
          { kind: 'hang' },
          { kind: 'completion', content: 'second answer' },
        ];
        const started = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/run`, {
          method: 'POST',
          headers: bearer(token, { 'content-type': 'application/json' }),
          body: JSON.stringify({ inputs: { ticket: 'pay once' } }),
        });
        expect(started.status).toBe(202);
        const runId = ((await started.json()) as { data: { id: string } }).data.id;
        const getRun = async () =>
          (
            (await (
              await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}`, { headers: bearer(token) })
            ).json()) as { data: RunBody }
          ).data;
        const callsOf = (step: string) => fake.requests.filter((r) => r.messages[0]?.content === step).length;

        // Killed once the store has the first node finished and the second is waiting on its provider.
        await waitFor('first finished in the store, second mid-call', async () => {
          const run = await getRun();
          return (
            callsOf('second step') === 1 && run.logs.some((s) => s.node_id === 'first' && s.status === 'completed')
          );
        });
        const firstAttempt = await getRun();
        worker.child.kill('SIGKILL');
        await worker.exited;

        // Another worker takes the run over once pg-boss sees the missed heartbeats.
        await server.ctx.runs!.startWorker();
        await waitFor(
          'the run ending after its takeover',
          async () => ['completed', 'failed', 'cancelled'].includes((await getRun()).status),
          50_000,
        );
        const run = await getRun();
        expect(run).toMatchObject({ status: 'completed', output: { result: 'second answer' } });
        expect(callsOf('first step')).toBe(1);
        expect(callsOf('second step')).toBe(2);
        // The log keeps the first attempt's finished steps and reads in execution order, once per node.
        expect(run.logs.map((s) => `${s.node_id} ${s.status} ${s.output}`)).toEqual([
          'input completed pay once',
          'first completed first answer',
          'second completed second answer',
          'result completed second answer',
        ]);
        // The run's usage counts the first attempt's finished call too: the sum of its steps'.
        const first = run.logs.find((s) => s.node_id === 'first')!.usage!.total_tokens;
        const second = run.logs.find((s) => s.node_id === 'second')!.usage!.total_tokens;
        expect(first).toBeGreaterThan(0);
        expect(run.usage!.total_tokens).toBe(first + second);
        // The run's start is its first attempt's, and its duration spans both attempts (it covered only
        // the last one): from before the first node's start to the run's end.
        expect(firstAttempt.started_at).not.toBeNull();
        expect(run.started_at).toBe(firstAttempt.started_at);
        expect(Date.parse(run.started_at!)).toBeLessThanOrEqual(
          Date.parse(run.logs.find((s) => s.node_id === 'first')!.started_at!),
        );
        expect(Math.round(run.duration! * 1000)).toBe(Date.parse(run.finished_at!) - Date.parse(run.started_at!));
      },
    );
  },
);
