// Schedules that keep time for everyone: the operator's caps (schedules per user, the shortest
// interval), no backlog (a late tick is skipped; a paused, deleted or orphaned schedule's queued
// ticks go at once) and fairness between users (one user's ticks hold at most
// SCHEDULE_TICKS_PER_USER handlers; another user's tick is taken meanwhile). Real HTTP server,
// real store (PostgreSQL; MySQL too when TEST_MYSQL_URL is set), real pg-boss. No speed is
// asserted: the waits are generous guards against a hang.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { SCHEDULE_QUEUE, scheduleQueue, tickGroup } from '../runs/scheduleQueue.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { runTick } from './ticks.ts';

async function apiKeyFor(ctx: AppContext, login: string): Promise<{ token: string; userId: number }> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'schedules',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return { token, userId: user.id };
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const allow = { hit: () => null };

describe.each(testDialects())('schedules keep time for everyone on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;
  let carol: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      runs: true,
      env: { USER_MAX_SCHEDULES: '3', SCHEDULE_MIN_INTERVAL_SECONDS: '300' },
    });
    alice = createApiClient(server.baseUrl, { bearer: (await apiKeyFor(server.ctx, 'alice')).token });
    bob = createApiClient(server.baseUrl, { bearer: (await apiKeyFor(server.ctx, 'bob')).token });
    carol = createApiClient(server.baseUrl, { bearer: (await apiKeyFor(server.ctx, 'carol')).token });
  });

  afterAll(async () => {
    await server?.close();
  });

  const tickCtx = () => ({ ...server.ctx, runs: server.ctx.runs! });
  const boss = () => server.ctx.runs!.queue.boss;
  const queuedTicks = async (scheduleId: string) =>
    (await boss().findJobs(SCHEDULE_QUEUE, { data: { scheduleId }, queued: true })).length;
  /** A tick's job filed for later (so the worker leaves it queued), as pg-boss's scheduler files one. */
  const fileTick = (scheduleId: string) => boss().send(SCHEDULE_QUEUE, { scheduleId }, { startAfter: 3600 });

  async function createWorkflow(client: ApiClient): Promise<string> {
    const { data, error } = await client.POST('/api/workflows', { body: { name: 'Scheduled', ...seedGraph() } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  const create = (client: ApiClient, workflowId: string, body: Schemas['ScheduleCreate']) =>
    client.POST('/api/workflows/{workflow_id}/schedules', { params: { path: { workflow_id: workflowId } }, body });
  const path = (workflowId: string, id: string) => ({ params: { path: { workflow_id: workflowId, schedule_id: id } } });
  const runsOf = async (client: ApiClient, workflowId: string) =>
    (await client.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } })).data!
      .data;

  it('refuses a schedule past USER_MAX_SCHEDULES across workflows (409 too_many_schedules with the limit); another user is not counted', async () => {
    const body = { cron: '0 9 * * *', inputs: { ticket: 'x' } };
    const [wf1, wf2] = [await createWorkflow(carol), await createWorkflow(carol)];
    for (const wf of [wf1, wf1, wf2]) expect((await create(carol, wf, body)).response.status).toBe(201);
    const refused = await create(carol, wf2, body);
    expect(refused.error).toMatchObject({ status: 409, code: 'too_many_schedules' });
    expect(refused.error!.detail).toContain('at most 3 schedules');
    expect((await create(bob, await createWorkflow(bob), body)).response.status).toBe(201);
    // Deleting one makes room again.
    const first = (
      await carol.GET('/api/workflows/{workflow_id}/schedules', { params: { path: { workflow_id: wf1 } } })
    ).data!.data[0]!;
    await carol.DELETE('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf1, first.id));
    expect((await create(carol, wf2, body)).response.status).toBe(201);
  });

  it('refuses ticks closer together than SCHEDULE_MIN_INTERVAL_SECONDS on create and update (400 invalid_schedule naming the minimum)', async () => {
    const wf = await createWorkflow(bob);
    for (const cron of ['* * * * *', '*/4 * * * *', '0,1 9 * * *']) {
      const refused = await create(bob, wf, { cron, inputs: { ticket: 'x' } });
      expect(refused.error, cron).toMatchObject({
        status: 400,
        code: 'invalid_schedule',
        errors: [{ pointer: '/body/cron' }],
      });
      expect(refused.error!.detail).toContain('the shortest interval allowed is 300 s');
    }
    const made = await create(bob, wf, { cron: '*/5 * * * *', inputs: { ticket: 'x' } });
    expect(made.response.status).toBe(201);
    const patched = await bob.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      ...path(wf, made.data!.data.id),
      body: { cron: '*/2 * * * *' },
    });
    expect(patched.error).toMatchObject({ status: 400, code: 'invalid_schedule', errors: [{ pointer: '/body/cron' }] });
  });

  it("skips a tick taken after the schedule's next tick came due, and runs one taken before it (at most one catch-up)", async () => {
    const wf = await createWorkflow(alice);
    const id = (await create(alice, wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } })).data!.data.id;
    const due = new Date('2026-01-05T09:00:00.500Z'); // filed just after the tick of 09:00 UTC
    await runTick(tickCtx(), allow, id, 'late-tick', {
      createdOn: due,
      startedOn: new Date(due.getTime() + 25 * 3600_000),
    });
    expect(await runsOf(alice, wf)).toHaveLength(0);
    await runTick(tickCtx(), allow, id, 'on-time-tick', {
      createdOn: due,
      startedOn: new Date(due.getTime() + 23 * 3600_000),
    });
    expect(await runsOf(alice, wf)).toHaveLength(1);
  });

  it("drops a schedule's queued ticks when it is paused or deleted, and its workflow's when the workflow is deleted", async () => {
    const wf = await createWorkflow(alice);
    const [paused, deleted] = [
      (await create(alice, wf, { cron: '0 9 * * *', inputs: { ticket: 'x' } })).data!.data.id,
      (await create(alice, wf, { cron: '0 10 * * *', inputs: { ticket: 'x' } })).data!.data.id,
    ];
    for (const id of [paused, deleted]) await fileTick(id);
    expect([await queuedTicks(paused), await queuedTicks(deleted)]).toEqual([1, 1]);
    await alice.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      ...path(wf, paused),
      body: { enabled: false },
    });
    expect(await queuedTicks(paused)).toBe(0);
    await alice.DELETE('/api/workflows/{workflow_id}/schedules/{schedule_id}', path(wf, deleted));
    expect(await queuedTicks(deleted)).toBe(0);
    // A paused schedule's tick that comes anyway (filed before the pause reached pg-boss) starts no run.
    await runTick(tickCtx(), allow, paused, 'tick-of-paused');
    expect(await runsOf(alice, wf)).toHaveLength(0);

    const doomed = await createWorkflow(alice);
    const doomedSchedule = (await create(alice, doomed, { cron: '0 11 * * *', inputs: { ticket: 'x' } })).data!.data.id;
    await fileTick(doomedSchedule);
    expect(
      (await alice.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: doomed } } })).response
        .status,
    ).toBe(204);
    expect(await queuedTicks(doomedSchedule)).toBe(0);
    expect(await server.ctx.db('workflow_schedules').where({ id: doomedSchedule }).first()).toBeUndefined();
    expect(await server.ctx.runs!.queue.schedules.ids()).not.toContain(doomedSchedule);
  });

  it("runs both users' due ticks when one user has many queued before the other's", async () => {
    const dave = await apiKeyFor(server.ctx, 'dave');
    const erin = await apiKeyFor(server.ctx, 'erin');
    const [daveClient, erinClient] = [
      createApiClient(server.baseUrl, { bearer: dave.token }),
      createApiClient(server.baseUrl, { bearer: erin.token }),
    ];
    const [daveWf, erinWf] = [await createWorkflow(daveClient), await createWorkflow(erinClient)];
    const daveSchedules: string[] = [];
    for (const hour of [1, 2, 3])
      daveSchedules.push(
        (await create(daveClient, daveWf, { cron: `0 ${hour} * * *`, inputs: { ticket: 'd' } })).data!.data.id,
      );
    const erinSchedule = (await create(erinClient, erinWf, { cron: '0 4 * * *', inputs: { ticket: 'e' } })).data!.data
      .id;
    // Eight of dave's ticks due now (within his concurrent-run quota), then erin's one: each in its owner's group, as put() files them.
    for (let i = 0; i < 8; i++)
      await boss().send(
        SCHEDULE_QUEUE,
        { scheduleId: daveSchedules[i % 3] },
        { group: { id: tickGroup(dave.userId) } },
      );
    await boss().send(SCHEDULE_QUEUE, { scheduleId: erinSchedule }, { group: { id: tickGroup(erin.userId) } });
    await until(
      "erin's tick's run",
      () => runsOf(erinClient, erinWf),
      (runs) => runs.length >= 1,
    );
    await until(
      "dave's ticks' runs",
      () => runsOf(daveClient, daveWf),
      (runs) => runs.length >= 8,
    );
  });
});

describe('tick handlers shared between users', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ runs: { worker: false } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("holds at most SCHEDULE_TICKS_PER_USER of one user's slow ticks at once, and takes another user's tick meanwhile", async () => {
    const boss = server.ctx.runs!.queue.boss;
    const name = 'schedule-ticks-fairness';
    const queue = await scheduleQueue(boss, name);
    // Alice's ten ticks are filed first; none of them ends until bob's has been handled.
    for (let i = 0; i < 10; i++) await boss.send(name, { scheduleId: `alice-${i}` }, { group: { id: tickGroup(1) } });
    await boss.send(name, { scheduleId: 'bob' }, { group: { id: tickGroup(2) } });
    let bobHandled!: () => void;
    const bobDone = new Promise<void>((resolve) => (bobHandled = resolve));
    let aliceInFlight = 0;
    let aliceMostInFlight = 0;
    let aliceHandledBeforeBob = 0;
    const handled: string[] = [];
    let bobSeen = false;
    await queue.work(
      async ({ scheduleId }) => {
        if (scheduleId === 'bob') {
          bobSeen = true;
          bobHandled();
        } else {
          aliceInFlight++;
          aliceMostInFlight = Math.max(aliceMostInFlight, aliceInFlight);
          await bobDone;
          if (!bobSeen) aliceHandledBeforeBob++;
          aliceInFlight--;
        }
        handled.push(scheduleId);
      },
      { concurrency: 3, batchSize: 5, perUser: 2 },
    );
    await until(
      'every tick handled',
      async () => handled.length,
      (n) => n === 11,
    );
    await boss.offWork(name);
    // Had alice's ticks taken every handler, bob's would never have come and none of hers would end.
    expect(aliceHandledBeforeBob).toBe(0);
    expect(aliceMostInFlight).toBeLessThanOrEqual(2);
    expect(handled.indexOf('bob')).toBe(0);
  });

  it('tells each handler when its tick was filed and when it was taken (what the late-tick rule reads)', async () => {
    const boss = server.ctx.runs!.queue.boss;
    const name = 'schedule-ticks-timing';
    const queue = await scheduleQueue(boss, name);
    await boss.send(name, { scheduleId: 'held' }, { startAfter: 2 }); // taken no earlier than 2 s after it was filed
    const seen: Array<{ scheduleId: string; createdOn: Date; startedOn: Date }> = [];
    await queue.work(
      async ({ scheduleId, createdOn, startedOn }) => void seen.push({ scheduleId, createdOn, startedOn }),
      { concurrency: 1, batchSize: 5, perUser: 1 },
    );
    await until(
      'the tick handled',
      async () => seen.length,
      (n) => n === 1,
    );
    await boss.offWork(name);
    expect(seen[0]!.scheduleId).toBe('held');
    expect(seen[0]!.startedOn.getTime() - seen[0]!.createdOn.getTime()).toBeGreaterThanOrEqual(2000);
  });
});
