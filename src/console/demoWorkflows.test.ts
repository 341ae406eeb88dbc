import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedDemo, type DemoSeed } from '../accounts/seed.ts';

// The demo shows the engine with no model provider: its seeded workflows run through the real
// queue and worker with the demo models, a branch is taken or skipped, a slow run can be watched
// and cancelled, and a flaky call succeeds on its node's retry.

const ENDED = ['completed', 'failed', 'cancelled'];

describe('the demo workflows, run through the queue with the demo models', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  const id = (name: string) => seed.workflows.find((w) => w.name === name)!.id;

  beforeAll(async () => {
    server = await startTestServer({ runs: true, env: { DEMO_MODELS: 'true' } });
    seed = (await seedDemo(server.ctx))!;
    api = createApiClient(server.baseUrl, { bearer: seed.apiKey.token });
  });
  afterAll(() => server?.close());

  async function start(name: string, inputs: Record<string, string>) {
    const { data, response } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: id(name) } },
      body: { inputs },
    });
    expect(response.status).toBe(202);
    return data!.data;
  }
  async function waitFor(name: string, runId: string, done: (status: string) => boolean) {
    for (;;) {
      const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: { workflow_id: id(name), run_id: runId } },
      });
      if (done(data!.data.status)) return data!.data;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('Triage takes the branch its condition names and skips the other', async () => {
    const urgent = await waitFor('Triage', (await start('Triage', { ticket: 'URGENT: the site is down' })).id, (s) =>
      ENDED.includes(s),
    );
    expect(urgent.status).toBe('completed');
    expect(urgent.output).toEqual({ result: 'Page someone: URGENT: the site is down' });
    expect(urgent.logs.find((s) => s.node_id === 'queue')?.status).toBe('skipped');
    const calm = await waitFor('Triage', (await start('Triage', { ticket: 'a typo' })).id, (s) => ENDED.includes(s));
    expect(calm.output).toEqual({ result: 'Queued: a typo' });
  });

  it('Slow summary is still running after its first words (echo-slow), and a cancel ends it cancelled', async () => {
    const run = await start('Slow summary', { text: 'one two three four five six seven eight nine ten' });
    await waitFor('Slow summary', run.id, (s) => s === 'running' || ENDED.includes(s));
    const cancel = await api.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', {
      params: { path: { workflow_id: id('Slow summary'), run_id: run.id } },
    });
    expect(cancel.response.status).toBe(200);
    const ended = await waitFor('Slow summary', run.id, (s) => ENDED.includes(s));
    expect(ended.status).toBe('cancelled');
  });

  it('Flaky call fails twice and completes on its third attempt (echo-fail-2, retry max_attempts 3)', async () => {
    const ended = await waitFor('Flaky call', (await start('Flaky call', { question: 'still there?' })).id, (s) =>
      ENDED.includes(s),
    );
    expect([ended.status, ended.output]).toEqual(['completed', { result: 'still there?' }]);
  });
});
