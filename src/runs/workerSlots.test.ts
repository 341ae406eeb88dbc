// A user's share of a worker's slots (USER_MAX_WORKER_SLOTS): one user's runs cannot hold every
// slot of RUN_CONCURRENCY, so another user's run starts while theirs wait in the queue. Real HTTP
// server, store and queue; the fake provider holds the first user's calls until the test lets go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startFakeOpenAI, type FakeOpenAI, replyGate } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

describe("a user's share of worker slots", () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  const { held, release } = replyGate();

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // alice's model answers only once the test lets go; bob's (echo) at once.
    fake.answer = () => ({ kind: 'completion', content: 'late', until: held });
    server = await startTestServer({
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'llama-3',
        RUN_CONCURRENCY: '2',
        USER_MAX_WORKER_SLOTS: '1',
      },
    });
  });
  afterAll(async () => {
    release();
    await server?.close();
    await fake?.close();
  });

  async function start(client: ApiClient, workflowId: string, prefer?: string) {
    const { data, error } = await client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: prefer ? { Prefer: prefer } : {} },
      body: { inputs: { ticket: 'x' } },
    });
    if (!data) throw new Error(`run refused: ${JSON.stringify(error)}`);
    return data.data;
  }
  async function workflow(client: ApiClient, model: string): Promise<string> {
    const { data } = await client.POST('/api/workflows', { body: { name: 'slots', ...seedGraph(model) } });
    return data!.data.id;
  }

  it("one user's runs hold at most USER_MAX_WORKER_SLOTS: another user's run goes through while theirs wait", async () => {
    const alice = await workflowsClient(server.ctx, server.baseUrl, 'slots-alice');
    const bob = await workflowsClient(server.ctx, server.baseUrl, 'slots-bob');
    const slow = await workflow(alice, 'llama-3');
    const aliceRuns = [await start(alice, slow), await start(alice, slow), await start(alice, slow)];
    // alice's first run reaches the provider and stays there; with both slots hers, bob's would wait for it.
    await expect.poll(() => fake.requests.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const bobs = await start(bob, await workflow(bob, 'echo'), 'wait=30');
    expect(bobs).toMatchObject({ status: 'completed', output: { result: 'x' } });
    // alice holds one slot: her other runs are still queued, and none of hers has ended.
    expect(fake.requests.length).toBe(1);
    const states = await Promise.all(
      aliceRuns.map(
        async (r) =>
          (
            await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
              params: { path: { workflow_id: slow, run_id: r.id } },
            })
          ).data!.data.status,
      ),
    );
    expect(states.sort()).toEqual(['queued', 'queued', 'running']);
    release();
    for (const r of aliceRuns) {
      await expect
        .poll(
          async () =>
            (
              await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
                params: { path: { workflow_id: slow, run_id: r.id } },
              })
            ).data!.data.status,
          { timeout: 30_000 },
        )
        .toBe('completed');
    }
  });
});
