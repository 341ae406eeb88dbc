// Listeners that never go blind: the queue's PostgreSQL, whose LISTEN connection tells
// an API process of run ends and events (NOTIFY), is stopped under a `Prefer: wait` request and an
// event stream, and the run ends (in the store, which stays up) while it is away. Both must get
// the run's end within a few seconds of the store having it: not when the LISTEN connection is
// back (PostgreSQL restarted 12 s later, then a reconnect backoff that reaches 30 s). The worker is
// a real process of its own, so the API process hears of the end only through the queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startOwnPostgres, type OwnDatabase } from './support/databases.ts';
import { apiKeyFor, bearer, createWorkflow, sleep, waitFor } from './support/fixtures.ts';
import { startWorker, type WorkerProcess } from './support/worker.ts';

/** Far below the 12 s the queue stays away (and the LISTEN backoff after it), far above the 1 s re-read. */
const REACHES_WITHIN_MS = 5_000;

describe("a run that ends while the queue's LISTEN connection is away", () => {
  let queue: OwnDatabase;
  let fake: FakeOpenAI;
  let server: TestServer;
  let worker: WorkerProcess;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    queue = await startOwnPostgres();
    server = await startTestServer({
      runs: { worker: false },
      queueUrl: queue.url,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'slow-model' },
    });
    worker = await startWorker({
      DATABASE_URL: server.databaseUrl,
      QUEUE_URL: queue.url,
      MODEL_PROVIDER_BASE_URL: fake.baseUrl,
      MODEL_PROVIDER_MODELS: 'slow-model',
    });
  }, 120_000);
  afterAll(async () => {
    if (worker?.child.exitCode === null) worker.child.kill('SIGKILL');
    await server?.close();
    await queue?.destroy();
    await fake?.close();
  });

  it(
    'reaches a Prefer: wait request and an event stream within seconds of the store having it, not when LISTEN returns',
    { timeout: 60_000 },
    async () => {
      const { token } = await apiKeyFor(server.ctx.db, 'listen');
      const workflowId = await createWorkflow(server.baseUrl, token, 'slow-model');
      fake.replies = [{ kind: 'completion', content: 'done at last', delayMs: 4_000 }];
      const started = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/run`, {
        method: 'POST',
        headers: bearer(token, { 'content-type': 'application/json' }),
        body: JSON.stringify({ inputs: { ticket: 'wait for me' } }),
      });
      expect(started.status).toBe(202);
      const runId = ((await started.json()) as { data: { id: string } }).data.id;
      const runUrl = `${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}`;
      await waitFor('the worker calling the model', async () => fake.requests.length === 1);

      // An event stream, read as it comes: when its run.finished arrived.
      const stream = await fetch(`${runUrl}/events`, { headers: bearer(token, { accept: 'text/event-stream' }) });
      expect(stream.status).toBe(200);
      const streamEnded = (async () => {
        let text = '';
        const decoder = new TextDecoder();
        for await (const chunk of stream.body!) {
          text += decoder.decode(chunk as Uint8Array, { stream: true });
          if (text.includes('event: run.finished')) return Date.now();
        }
        throw new Error(`the stream ended without run.finished:\n${text}`);
      })();
      const waited = fetch(runUrl, { headers: bearer(token, { prefer: 'wait=60' }) }).then(async (res) => ({
        at: Date.now(),
        res,
      }));
      await sleep(300); // both are waiting

      await queue.stop();
      const restarted = sleep(12_000).then(() => queue.start());
      try {
        const { at, res } = await waited;
        expect(res.status).toBe(200);
        const run = ((await res.json()) as { data: { status: string; finished_at: string } }).data;
        expect(run.status).toBe('completed');
        const storedAt = Date.parse(run.finished_at);
        expect(at - storedAt).toBeLessThan(REACHES_WITHIN_MS);
        expect((await streamEnded) - storedAt).toBeLessThan(REACHES_WITHIN_MS);
      } finally {
        await restarted;
      }
    },
  );
});
