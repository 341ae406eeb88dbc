// Per-user quotas on runs (USER_MAX_CONCURRENT_RUNS, USER_RUNS_PER_MINUTE) and on a workflow's
// size (WORKFLOW_MAX_NODES), through a real HTTP server, store and queue. No worker runs here, so
// started runs stay queued until cancelled: the concurrency count is exactly what the test made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import type { AppContext } from '../context.ts';
import { dialectOf } from '../db/knex.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

async function apiKeyFor(ctx: AppContext, login: string): Promise<string> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'quotas',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return token;
}

describe.each(testDialects())('run and workflow quotas per user (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      runs: { worker: false },
      env: { USER_MAX_CONCURRENT_RUNS: '2', USER_RUNS_PER_MINUTE: '4', WORKFLOW_MAX_NODES: '3' },
    });
    // One process counts run starts exactly (no once-a-second flush racing the requests).
    server.rateLimiters.runStarts.stop();
  });
  afterAll(async () => {
    await server?.close();
  });

  const call = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function workflowOf(key: string): Promise<string> {
    const res = await call(key, 'POST', '/api/workflows', { name: 'quota', ...seedGraph() });
    expect(res.status).toBe(201);
    return ((await res.json()) as { data: { id: string } }).data.id;
  }
  const start = (key: string, workflowId: string, headers: Record<string, string> = {}) =>
    call(key, 'POST', `/api/workflows/${workflowId}/run`, { inputs: { ticket: 'x' } }, headers);
  const cancel = async (key: string, workflowId: string, runId: string) =>
    expect((await call(key, 'POST', `/api/workflows/${workflowId}/runs/${runId}/cancel`)).status).toBe(200);
  const runIdOf = async (res: Response) => ((await res.json()) as { data: { id: string } }).data.id;

  it('refuses a run past USER_MAX_CONCURRENT_RUNS queued or running with 429, Retry-After and problem+json; replays, other users and ended runs do not count', async () => {
    const alice = await apiKeyFor(server.ctx, 'quota-alice');
    const bob = await apiKeyFor(server.ctx, 'quota-bob');
    const wf = await workflowOf(alice);
    const first = await start(alice, wf, { 'Idempotency-Key': 'one' });
    expect(first.status).toBe(202);
    const firstId = await runIdOf(first);
    expect((await start(alice, wf)).status).toBe(202);

    const refused = await start(alice, wf);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({
      status: 429,
      title: 'Too Many Requests',
      detail: 'At most 2 runs may be queued or running at once per user; retry when one has ended.',
    });

    // A replay of a run already started is that run, not a new one.
    const replay = await start(alice, wf, { 'Idempotency-Key': 'one' });
    expect(replay.status).toBe(202);
    expect(await runIdOf(replay)).toBe(firstId);
    // Another user's quota is their own.
    expect((await start(bob, await workflowOf(bob))).status).toBe(202);
    // A run that ended frees its place.
    await cancel(alice, wf, firstId);
    expect((await start(alice, wf)).status).toBe(202);
  });

  it('never lets concurrent starts by one user overshoot USER_MAX_CONCURRENT_RUNS', async () => {
    const carol = await apiKeyFor(server.ctx, 'quota-carol');
    const wf = await workflowOf(carol);
    const statuses = (await Promise.all([1, 2, 3].map(() => start(carol, wf)))).map((r) => r.status).sort();
    expect(statuses).toEqual([202, 202, 429]);
    const [{ n }] = (await server.ctx.db('runs').where({ workflow_id: wf }).count({ n: '*' })) as [
      { n: number | string },
    ];
    expect(Number(n)).toBe(2);
  });

  it("counts the runs committed while a start waited for the user's lock: the count is read after the lock, never from before it", async () => {
    const frank = await apiKeyFor(server.ctx, 'quota-frank');
    const wf = await workflowOf(frank);
    expect((await start(frank, wf)).status).toBe(202); // 1 of 2
    const db = server.ctx.db;
    const { user_id: userId } = (await db('workflows').where({ id: wf }).first()) as { user_id: number };
    const trx = await db.transaction();
    let answered: Promise<Response>;
    try {
      // Another start of frank's holds his row; this one waits for it in the database.
      await trx('users').where({ id: userId }).forUpdate().first('id');
      answered = start(frank, wf);
      await waitUntilALockIsAwaited(db);
      // The holder takes the last place, then lets go: the waiting start must count that run.
      await trx('runs').insert({
        id: 'run_quota_race_holder',
        workflow_id: wf,
        user_id: userId,
        status: 'queued',
        inputs: '{}',
        graph: '{}',
        attempts: 0,
        created_at: Date.now(),
      });
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    const refused = await answered;
    expect(refused.status).toBe(429);
    const [{ n }] = (await db('runs').where({ workflow_id: wf }).count({ n: '*' })) as [{ n: number | string }];
    expect(Number(n)).toBe(2);
  });

  it("refuses a run past USER_RUNS_PER_MINUTE with 429 and the window's Retry-After, even when none is running", async () => {
    const dave = await apiKeyFor(server.ctx, 'quota-dave');
    const wf = await workflowOf(dave);
    for (let i = 0; i < 4; i += 1) {
      const res = await start(dave, wf);
      expect(res.status).toBe(202);
      await cancel(dave, wf, await runIdOf(res));
    }
    const refused = await start(dave, wf);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await refused.json()).toMatchObject({
      status: 429,
      detail: `At most 4 runs may be started per minute per user; retry in ${retryAfter} s.`,
    });
  });

  it('refuses a workflow of more than WORKFLOW_MAX_NODES nodes with 422 pointing at /nodes, on create and update', async () => {
    const erin = await apiKeyFor(server.ctx, 'quota-erin');
    const graph = seedGraph();
    const big = {
      nodes: [...graph.nodes, { id: 'extra', type: 'text_output' as const, config: { format: 'plain' as const } }],
      edges: [...graph.edges, { from: 'summarise', to: 'extra' }],
    };
    const created = await call(erin, 'POST', '/api/workflows', { name: 'big', ...big });
    expect(created.status).toBe(422);
    expect(created.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await created.json()).toMatchObject({
      status: 422,
      errors: [{ pointer: '/nodes', message: 'must have at most 3 nodes' }],
    });

    const wf = await workflowOf(erin); // three nodes: the limit itself is allowed
    const updated = await call(erin, 'PATCH', `/api/workflows/${wf}`, big);
    expect(updated.status).toBe(422);
    expect(await updated.json()).toMatchObject({
      errors: [{ pointer: '/nodes', message: 'must have at most 3 nodes' }],
    });
  });
});

/** Resolves once a connection to this test's database waits for a row lock (the start queued behind the test's transaction). */
async function waitUntilALockIsAwaited(db: Knex): Promise<void> {
  const waiting =
    dialectOf(db) === 'pg'
      ? "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"
      : "select count(*) as n from information_schema.processlist where db = database() and info like '%for update'"; // InnoDB waits in the optimizer for a row read by its key
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = (await db.raw(waiting)) as { rows?: { n: unknown }[] } | [{ n: unknown }[]];
    const rows = Array.isArray(result) ? result[0] : result.rows!;
    if (Number(rows[0]?.n) > 0) return;
    if (Date.now() > deadline) throw new Error("the start never waited for the user's lock");
    await new Promise((r) => setTimeout(r, 10));
  }
}
