// Workflow schedules through a real HTTP server, a real store (PostgreSQL; MySQL
// too when TEST_MYSQL_URL is set) and a real pg-boss with an in-process worker. Ticks are driven
// here by calling the tick's handler with a tick id, as pg-boss's job would (the several-process
// proof that a tick fires once is test/http/scheduleTicks.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { runTick } from './ticks.ts';

async function apiKeyFor(ctx: AppContext, login: string): Promise<string> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'schedules',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return token;
}

const allow = { hit: () => null };

describe.each(testDialects())('workflow schedules on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    alice = createApiClient(server.baseUrl, { bearer: await apiKeyFor(server.ctx, 'alice') });
    bob = createApiClient(server.baseUrl, { bearer: await apiKeyFor(server.ctx, 'bob') });
  });
  afterAll(async () => {
    await server?.close();
  });

  const tickCtx = () => ({ ...server.ctx, runs: server.ctx.runs! });
  const pgBossIds = () => server.ctx.runs!.queue.schedules.ids();

  async function createWorkflow(client = alice): Promise<string> {
    const { data, error } = await client.POST('/api/workflows', { body: { name: 'Scheduled', ...seedGraph() } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  const create = (workflowId: string, body: Schemas['ScheduleCreate'], client = alice) =>
    client.POST('/api/workflows/{workflow_id}/schedules', { params: { path: { workflow_id: workflowId } }, body });
  const path = (workflowId: string, id: string) => ({ params: { path: { workflow_id: workflowId, schedule_id: id } } });

  it('creates a schedule read in its IANA time zone, mirrored into pg-boss, and lists it', async () => {
    const wf = await createWorkflow();
    const { data, response } = await create(wf, {
      cron: '0 9 * * *',
      timezone: 'Asia/Tokyo',
      inputs: { ticket: 'daily' },
    });
    expect(response.status).toBe(201);
    const schedule = data!.data;
    expect(response.headers.get('location')).toBe(`/api/workflows/${wf}/schedules/${schedule.id}`);
    expect(schedule).toMatchObject({
      workflow_id: wf,
      cron: '0 9 * * *',
      timezone: 'Asia/Tokyo',
      inputs: { ticket: 'daily' },
      version: null,
      enabled: true,
      last_run_id: null,
    });
    // 09:00 in Tokyo (UTC+9, no daylight saving) is 00:00 UTC.
    expect(new Date(schedule.next_run_at!).getUTCHours()).toBe(0);
    expect(new Date(schedule.next_run_at!).getTime()).toBeGreaterThan(Date.now());
    expect(await pgBossIds()).toContain(schedule.id);

    const list = await alice.GET('/api/workflows/{workflow_id}/schedules', {
      params: { path: { workflow_id: wf }, query: { per_page: 1 } },
    });
    expect(list.data!.meta).toEqual({ page: 1, per_page: 1, total: 1, total_pages: 1 });
    expect(list.response.headers.get('link')).toContain(
      `</api/workflows/${wf}/schedules?page=1&per_page=1>; rel="first"`,
    );
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, schedule.id))).data!.data.id,
    ).toBe(schedule.id);
  });

  it('refuses a cron expression or time zone the scheduler cannot read, and inputs the workflow does not take (400)', async () => {
    const wf = await createWorkflow();
    expect((await create(wf, { cron: '61 * * * *', inputs: { ticket: 'x' } })).error).toMatchObject({
      status: 400,
      code: 'invalid_schedule',
      errors: [{ pointer: '/body/cron' }],
    });
    expect(
      (await create(wf, { cron: '0 9 * * *', timezone: 'Mars/Olympus', inputs: { ticket: 'x' } })).error,
    ).toMatchObject({
      status: 400,
      code: 'invalid_schedule',
      errors: [{ pointer: '/body/timezone' }],
    });
    expect((await create(wf, { cron: '0 9 * * *', inputs: { other: 'x' } })).error).toMatchObject({
      status: 400,
      code: 'invalid_run_inputs',
    });
    expect((await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'x' }, version: 7 })).error).toMatchObject({
      status: 400,
      code: 'invalid_field',
      errors: [{ pointer: '/body/version' }],
    });
    const made = await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } });
    const pinned = await alice.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      ...path(wf, made.data!.data.id),
      body: { version: 7 },
    });
    expect(pinned.error).toMatchObject({ status: 400, code: 'invalid_field', errors: [{ pointer: '/body/version' }] });
  });

  it("answers 404 for another user's workflow and schedule on every operation", async () => {
    const wf = await createWorkflow();
    const id = (await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } })).data!.data.id;
    expect((await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } }, bob)).error).toMatchObject({
      status: 404,
      code: 'workflow_not_found',
    });
    expect(
      (await bob.GET('/api/workflows/{workflow_id}/schedules', { params: { path: { workflow_id: wf } } })).response
        .status,
    ).toBe(404);
    expect((await bob.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, id))).response.status).toBe(
      404,
    );
    expect(
      (
        await bob.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
          ...path(wf, id),
          body: { enabled: false },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (await bob.DELETE('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, id))).response.status,
    ).toBe(404);
    const bobsWf = await createWorkflow(bob);
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(bobsWf, id))).error,
    ).toMatchObject({ status: 404, code: 'workflow_not_found' });
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, 'sch_nope'))).error,
    ).toMatchObject({ status: 404, code: 'schedule_not_found' });
  });

  it('disabling unschedules it in pg-boss (no next tick), enabling schedules it again, deleting removes it', async () => {
    const wf = await createWorkflow();
    const id = (await create(wf, { cron: '*/5 * * * *', inputs: { ticket: 'x' } })).data!.data.id;
    const off = await alice.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      ...path(wf, id),
      body: { enabled: false },
    });
    expect(off.data!.data).toMatchObject({ enabled: false, next_run_at: null });
    expect(await pgBossIds()).not.toContain(id);
    const on = await alice.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      ...path(wf, id),
      body: { enabled: true, cron: '0 0 1 1 *', timezone: 'UTC' },
    });
    expect(on.data!.data).toMatchObject({ enabled: true, cron: '0 0 1 1 *' });
    expect(on.data!.data.next_run_at).toMatch(/-01-01T00:00:00.000Z$/);
    expect(await pgBossIds()).toContain(id);
    expect(
      (await alice.DELETE('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, id))).response.status,
    ).toBe(204);
    expect(await pgBossIds()).not.toContain(id);
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, id))).response.status,
    ).toBe(404);
  });

  it('a tick starts one run of the pinned version with the inputs, and the same tick again starts none (Idempotency-Key)', async () => {
    const wf = await createWorkflow();
    await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: wf } },
      body: { name: 'Scheduled 2' },
    });
    const id = (await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'nightly' }, version: 1 })).data!.data.id;
    await runTick(tickCtx(), allow, id, 'tick-1');
    await runTick(tickCtx(), allow, id, 'tick-1'); // pg-boss redelivers the same job
    const runs = await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: wf } } });
    expect(runs.data!.data).toHaveLength(1);
    expect(runs.data!.data[0]).toMatchObject({ workflow_version: 1, inputs: { ticket: 'nightly' } });
    const schedule = (await alice.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, id))).data!.data;
    expect(schedule).toMatchObject({ last_run_id: runs.data!.data[0]!.id, last_error: null });
    await runTick(tickCtx(), allow, id, 'tick-2');
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: wf } } })).data!.data,
    ).toHaveLength(2);
  });

  it('carries typed inputs: checked when saved, read back as values, given to each tick as they are', async () => {
    const graph = {
      nodes: [
        { id: 'in', type: 'text_input' as const, config: { variable: 'filters', type: 'object' as const } },
        { id: 'n', type: 'text_input' as const, config: { variable: 'limit', type: 'integer' as const } },
        {
          id: 'say',
          type: 'template' as const,
          config: { template: '{{ inputs.filters.label }} x{{ inputs.limit }}' },
        },
        { id: 'out', type: 'text_output' as const, config: { format: 'plain' as const } },
      ],
      edges: [
        { from: 'in', to: 'say' },
        { from: 'n', to: 'say' },
        { from: 'say', to: 'out' },
      ],
    };
    const made = await alice.POST('/api/workflows', { body: { name: 'Typed', ...graph } });
    const wf = made.data!.data.id;
    const inputs = { filters: { label: 'bug', states: ['open'] }, limit: 20 };
    const { data, response } = await create(wf, { cron: '0 9 * * *', inputs });
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({
      inputs: { filters: JSON.stringify(inputs.filters), limit: '20' },
      input_values: inputs,
    });
    const wrong = await create(wf, { cron: '0 9 * * *', inputs: { filters: 'label=bug', limit: 2.5 } });
    expect(wrong.response.status).toBe(400);
    expect(wrong.error).toMatchObject({ code: 'invalid_run_inputs' });
    expect(wrong.error!.errors!.map((e) => e.pointer).sort()).toEqual(['/body/inputs/filters', '/body/inputs/limit']);
    const patched = await alice.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      ...path(wf, data!.data.id),
      body: { inputs: { ...inputs, limit: 'twenty' } },
    });
    expect(patched.response.status).toBe(400);

    await runTick(tickCtx(), allow, data!.data.id, 'typed-tick-1');
    const runs = await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: wf } } });
    expect(runs.data!.data).toHaveLength(1);
    const run = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: wf, run_id: runs.data!.data[0]!.id }, header: { Prefer: 'wait=10' } },
    });
    expect(run.data!.data).toMatchObject({ input_values: inputs, status: 'completed', output: { out: 'bug x20' } });
  });

  it("counts against the owner's run quota like an API start: a refused tick starts nothing and says why", async () => {
    const wf = await createWorkflow();
    const id = (await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } })).data!.data.id;
    const keys: string[] = [];
    const overQuota = { hit: (key: string) => (keys.push(key), 42) };
    await runTick(tickCtx(), overQuota, id, 'tick-quota');
    expect(keys).toEqual([`user:${(await server.ctx.db('workflows').where({ id: wf }).first()).user_id}`]); // the API's key for the user
    expect(
      (await alice.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: wf } } })).data!.data,
    ).toHaveLength(0);
    const schedule = (await alice.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, id))).data!.data;
    expect(schedule.last_run_id).toBeNull();
    expect(schedule.last_error).toMatch(/per minute/);
  });

  it("ends a deleted workflow's schedules at their next tick, and a tick of a deleted schedule starts nothing", async () => {
    const wf = await createWorkflow();
    const id = (await create(wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } })).data!.data.id;
    await alice.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: wf } } });
    await runTick(tickCtx(), allow, id, 'tick-deleted');
    expect(await pgBossIds()).not.toContain(id);
    expect(await server.ctx.db('workflow_schedules').where({ id }).first()).toBeUndefined();
    await runTick(tickCtx(), allow, 'sch_gone', 'tick-gone'); // no row: nothing, no throw
  });
});
