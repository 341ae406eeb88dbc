// Run retention (retention.ts): the purge by count (USER_MAX_STORED_RUNS, per user) and by age
// (RUN_RETENTION_DAYS) deletes finished runs with their steps and events, and never a run that has
// not ended. Real HTTP server, real stores (PostgreSQL; MariaDB too with TEST_MYSQL_URL), a real
// queue and worker; the fake provider holds one run unfinished for as long as the test needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI, replyGate } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { purgeRuns, purgeRunsPastCount } from './retention.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

const KEEP = 3;
const DAY_MS = 86_400_000;

describe.each(testDialects())('run retention on %s', (dialect) => {
  let server: TestServer;
  let fake: FakeOpenAI;
  const { held, release } = replyGate();

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.answer = (request) =>
      request.messages.some((m) => m.content.includes('HOLD'))
        ? { kind: 'completion', content: 'held', until: held }
        : { kind: 'completion', content: 'done' };
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, USER_MAX_STORED_RUNS: String(KEEP), RUN_RETENTION_DAYS: '30' },
    });
  });
  afterAll(async () => {
    release();
    await server?.close();
    await fake?.close();
  });

  async function workflowOf(client: ApiClient): Promise<string> {
    const { data, error } = await client.POST('/api/workflows', {
      body: { name: 'Kept runs', ...seedGraph('fake-model') },
    });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  async function finishedRun(client: ApiClient, workflowId: string, ticket: string): Promise<string> {
    const { data, response } = await client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=60' } },
      body: { inputs: { ticket } },
    });
    expect(response.status).toBe(200);
    expect(data!.data.status).toBe('completed');
    return data!.data.id;
  }
  const statusOf = async (client: ApiClient, workflowId: string, runId: string) =>
    (
      await client.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: { workflow_id: workflowId, run_id: runId } },
      })
    ).response.status;
  const rowsOf = async (table: 'run_events' | 'run_steps', runIds: string[]) =>
    Number(
      ((await server.ctx.db(table).whereIn('run_id', runIds).count({ n: '*' }).first()) as { n: number | string }).n,
    );

  it("keeps each user's newest USER_MAX_STORED_RUNS finished runs, then purges by RUN_RETENTION_DAYS, never an unfinished run", async () => {
    const alice = await workflowsClient(server.ctx, server.baseUrl, 'retention-alice');
    const bob = await workflowsClient(server.ctx, server.baseUrl, 'retention-bob');
    const aliceWf = await workflowOf(alice);
    const bobWf = await workflowOf(bob);
    const aliceRuns: string[] = [];
    for (let i = 0; i < 5; i++) aliceRuns.push(await finishedRun(alice, aliceWf, `a${i}`));
    const bobRuns = [await finishedRun(bob, bobWf, 'b0'), await finishedRun(bob, bobWf, 'b1')];
    // Alice's run held by the provider: queued or running, never finished, until released.
    const start = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: aliceWf } },
      body: { inputs: { ticket: 'HOLD' } },
    });
    expect(start.response.status).toBe(202);
    const unfinished = start.data!.data.id;
    expect(await rowsOf('run_events', aliceRuns.slice(0, 2))).toBeGreaterThan(0);

    // By count (the worker's own pass may have come first: the end state is the same).
    await purgeRunsPastCount(server.ctx.db, KEEP);
    for (const id of aliceRuns.slice(0, 2)) expect(await statusOf(alice, aliceWf, id)).toBe(404);
    for (const id of aliceRuns.slice(2)) expect(await statusOf(alice, aliceWf, id)).toBe(200);
    for (const id of bobRuns) expect(await statusOf(bob, bobWf, id)).toBe(200); // bob has 2: under his limit
    expect(await statusOf(alice, aliceWf, unfinished)).toBe(200);
    // Their steps and events went with them.
    expect(await rowsOf('run_events', aliceRuns.slice(0, 2))).toBe(0);
    expect(await rowsOf('run_steps', aliceRuns.slice(0, 2))).toBe(0);

    // By age: 31 days on, every finished run is past 30 days; the held run is not finished.
    const later = { ...server.ctx, now: () => Date.now() + 31 * DAY_MS };
    const purged = await purgeRuns(later);
    expect(purged.byAge).toBe(KEEP + bobRuns.length);
    for (const id of aliceRuns) expect(await statusOf(alice, aliceWf, id)).toBe(404);
    for (const id of bobRuns) expect(await statusOf(bob, bobWf, id)).toBe(404);
    expect(await statusOf(alice, aliceWf, unfinished)).toBe(200);

    // Today, nothing left is older than 30 days.
    expect(await purgeRuns(server.ctx)).toEqual({ byAge: 0, byCount: 0 });
    release();
    const ended = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: aliceWf, run_id: unfinished }, header: { Prefer: 'wait=60' } },
    });
    expect(ended.data!.data.status).toBe('completed');
  });
});
