// A user's steps are paced per process (USER_STEPS_PER_SECOND), through a real HTTP server, store
// and queue: one user's wide map waits its turns while another user's run goes through at once,
// /metrics counts the steps that waited, and a cancel stops the waiting steps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../client/src/index.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];

const METRICS_TOKEN = 'metrics-token-for-pacing-tests-0123456789';
const RATE = 5;

/** list -> a map of `items` items, each item -> template -> output (3 steps an item) -> output. */
const wideMap = {
  name: 'wide map',
  nodes: [
    { id: 'list', type: 'text_input', config: { variable: 'list', type: 'array' } },
    {
      id: 'each',
      type: 'map',
      config: {
        concurrency: 8,
        body: {
          nodes: [
            { id: 'item', type: 'text_input', config: { variable: 'item' } },
            { id: 'shape', type: 'template', config: { template: '<{{ inputs.item }}>' } },
            { id: 'out', type: 'text_output', config: { format: 'plain' } },
          ],
          edges: [
            { from: 'item', to: 'shape' },
            { from: 'shape', to: 'out' },
          ],
        },
      },
    },
    { id: 'result', type: 'text_output', config: { format: 'json' } },
  ] as Node[],
  edges: [
    { from: 'list', to: 'each' },
    { from: 'each', to: 'result' },
  ],
};

const oneNode = {
  name: 'one node',
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ] as Node[],
  edges: [{ from: 'in', to: 'out' }],
};

describe("a user's steps are paced (USER_STEPS_PER_SECOND)", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ runs: true, env: { USER_STEPS_PER_SECOND: String(RATE), METRICS_TOKEN } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const pacedSteps = async () => {
    const text = await (
      await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    return Number(/^workflow_steps_paced_total (\d+)/m.exec(text)?.[1] ?? NaN);
  };

  it("waits one user's steps past the pace while another user's run goes through, and a cancel stops them", async () => {
    const alice = await workflowsClient(server.ctx, server.baseUrl, 'pace-alice');
    const bob = await workflowsClient(server.ctx, server.baseUrl, 'pace-bob');
    const wide = (await alice.POST('/api/workflows', { body: wideMap })).data!.data.id;
    const one = (await bob.POST('/api/workflows', { body: oneNode })).data!.data.id;
    const before = await pacedSteps();

    // 30 items of 3 steps: about 90 steps, 18 s at 5 a second; the burst of 5 goes at once.
    const aliceRun = (
      await alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: wide } },
        body: { inputs: { list: Array.from({ length: 30 }, (_, i) => i) } as unknown as Record<string, string> },
      })
    ).data!.data;
    await expect.poll(pacedSteps, { timeout: 20_000 }).toBeGreaterThan(before);

    const bobs = await bob.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: one }, header: { Prefer: 'wait=30' } },
      body: { inputs: { text: 'hi' } },
    });
    expect(bobs.data!.data).toMatchObject({ status: 'completed', output: { out: 'hi' } });

    const path = { workflow_id: wide, run_id: aliceRun.id };
    const aliceNow = (await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).data!.data;
    // Not ended (a run that has only started may still read `queued` until its claim is written).
    expect(['queued', 'running']).toContain(aliceNow.status);
    await alice.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', { params: { path } });
    await expect
      .poll(
        async () =>
          (await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).data!.data.status,
        { timeout: 15_000 },
      )
      .toBe('cancelled');
    const logs =
      (await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path } })).data!.data.logs ?? [];
    const itemSteps = logs.filter((s) => s.node_id.startsWith('each['));
    expect(itemSteps.length).toBeLessThan(90);
  });
});
