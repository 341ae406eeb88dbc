// Queue outage: the run queue's PostgreSQL (pg-boss) is stopped under a running service while the
// store stays up. A run request is refused with 503 before it is acknowledged (the stored run is
// failed with queue_unavailable, never left queued with no job); once the queue is back, the same
// Idempotency-Key re-queues that run and it completes. None is lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startOwnPostgres, type OwnDatabase } from './support/databases.ts';
import { apiKeyFor, bearer, createWorkflow, sleep, waitFor } from './support/fixtures.ts';

const BOUNDED_MS = 15_000;

interface RunBody {
  id: string;
  status: string;
  error: { code: string } | null;
}

describe('run queue outage (pg-boss on its own PostgreSQL)', () => {
  let queue: OwnDatabase;
  let server: TestServer;
  let apiKey: string;
  let workflowId: string;

  beforeAll(async () => {
    queue = await startOwnPostgres();
    server = await startTestServer({ runs: true, queueUrl: queue.url });
    apiKey = (await apiKeyFor(server.ctx.db)).token;
    workflowId = await createWorkflow(server.baseUrl, apiKey, 'echo');
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await queue?.destroy();
  });

  async function postRun(idempotencyKey: string) {
    const started = Date.now();
    const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/run`, {
      method: 'POST',
      headers: bearer(apiKey, { 'content-type': 'application/json', 'idempotency-key': idempotencyKey }),
      body: JSON.stringify({ inputs: { ticket: `ticket ${idempotencyKey}` } }),
    });
    return { res, ms: Date.now() - started, body: (await res.json()) as { data?: RunBody; status?: number } };
  }
  async function getRun(runId: string): Promise<RunBody> {
    const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs/${runId}`, { headers: bearer(apiKey) });
    return ((await res.json()) as { data: RunBody }).data;
  }
  async function listRuns(): Promise<RunBody[]> {
    const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs?per_page=100`, {
      headers: bearer(apiKey),
    });
    return ((await res.json()) as { data: RunBody[] }).data;
  }
  const completed = (runId: string) =>
    waitFor(`run ${runId} completed`, async () => (await getRun(runId)).status === 'completed', 30_000);

  it('refuses a run with 503 before acknowledging it while the queue is down (no queued-forever run), and the same Idempotency-Key runs it to completed once the queue returns', async () => {
    const before = await postRun('before-outage');
    expect(before.res.status).toBe(202);
    await completed(before.body.data!.id);

    await queue.stop();
    const during = await postRun('during-outage');
    expect(during.ms).toBeLessThan(BOUNDED_MS);
    // The enqueue fails at once (connection refused), so the run is refused, not acknowledged.
    expect(during.res.status).toBe(503);
    expect(during.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(during.res.headers.get('retry-after')).toBeTruthy();
    // Nothing may wait for a job that does not exist: the stored run says why it failed.
    const runs = (await listRuns()).filter((r) => r.id !== before.body.data!.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', error: { code: 'queue_unavailable' } });
    const runId = runs[0]!.id;
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { database: 'ok', queue: 'unavailable' } });
    // Reads do not need the queue.
    expect(
      (await fetch(`${server.baseUrl}/api/workflows/${workflowId}/runs`, { headers: bearer(apiKey) })).status,
    ).toBe(200);

    await queue.start();
    await waitFor(
      'the queue is ready again',
      async () => (await fetch(`${server.baseUrl}/readyz`)).status === 200,
      30_000,
    );
    // The client retries as told (same Idempotency-Key): the same run is queued again.
    let retried = await postRun('during-outage');
    for (let i = 0; retried.res.status === 503 && i < 20; i += 1) {
      await sleep(500);
      retried = await postRun('during-outage');
    }
    expect(retried.res.status).toBe(202);
    expect(retried.body.data!.id).toBe(runId);
    await completed(runId);
    // A new run after the outage goes through the recovered queue and worker as usual.
    const after = await postRun('after-outage');
    expect(after.res.status).toBe(202);
    await completed(after.body.data!.id);
  }, 120_000);
});
