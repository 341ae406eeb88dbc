// Monthly budgets per workflow and per API key (monthlyBudgets.ts), through a real HTTP server,
// store, queue and worker, a fake model provider that reports usage and a price table: a spent
// budget refuses the next start with the documented 429, and only the starts it covers; the spend
// is this calendar month's (UTC) runs; foreign and malformed input is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { runTick } from '../schedules/ticks.ts';
import { monthOf } from './monthlyBudgets.ts';

/** 1000 USD per million tokens: a token costs 0.001 USD (a million nanos), so every run costs cents. */
const PRICES = JSON.stringify({ 'llama-3': { input: 1000, output: 1000, currency: 'USD' } });

interface Key {
  token: string;
  id: number;
}

async function keyOf(ctx: AppContext, userId: number, login: string, name: string): Promise<Key> {
  const { token, record } = await createAccessToken(ctx, {
    userId,
    namespace: login,
    name,
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return { token, id: record.id };
}

async function userWithKeys(ctx: AppContext, login: string): Promise<[Key, Key]> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  return [await keyOf(ctx, user.id, login, 'first'), await keyOf(ctx, user.id, login, 'second')];
}

type Json = Record<string, unknown>;

describe.each(testDialects())('monthly budgets (%s)', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let unpriced: TestServer;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3', MODEL_PRICES: PRICES },
    });
    unpriced = await startTestServer({ dialect });
  }, 60_000);
  afterAll(async () => {
    await unpriced?.close();
    await server?.close();
    await fake?.close();
  });

  const call = async (key: Key, method: string, path: string, body?: unknown, on = server) => {
    const res = await fetch(`${on.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Json };
  };
  const workflowOf = async (key: Key, on = server): Promise<string> => {
    const graph = seedGraph(on === server ? 'llama-3' : 'echo');
    const res = await call(key, 'POST', '/api/workflows', { name: 'budgeted', ...graph }, on);
    expect(res.status).toBe(201);
    return (res.body.data as { id: string }).id;
  };
  /** Starts a run and waits for its end (a refused start answers at once). */
  const run = (key: Key, workflowId: string) =>
    fetch(`${server.baseUrl}/api/workflows/${workflowId}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.token}`, 'content-type': 'application/json', prefer: 'wait=30' },
      body: JSON.stringify({ inputs: { ticket: 'Printer on fire' } }),
    }).then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as Json }));
  const completed = async (key: Key, workflowId: string): Promise<string> => {
    const res = await run(key, workflowId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data as { id: string; status: string };
    expect(data.status).toBe('completed');
    return data.id;
  };
  const budgetPath = (workflowId: string) => `/api/workflows/${workflowId}/budget`;
  const keyBudgetPath = (key: Key) => `/api/access-tokens/${key.id}/budget`;
  const storedRun = (id: string) =>
    server.ctx.db('runs').where({ id }).first('access_token_id', 'cost_nanos', 'cost_currency', 'created_at');

  it('refuses the next run of a workflow once its runs this month cost its budget (429 budget_exhausted, Retry-After to the month end); another workflow and another user are unaffected', async () => {
    const [alice] = await userWithKeys(server.ctx, 'budget-alice');
    const [bob] = await userWithKeys(server.ctx, 'budget-bob');
    const capped = await workflowOf(alice);
    const free = await workflowOf(alice);
    const bobs = await workflowOf(bob);

    const set = await call(alice, 'PUT', budgetPath(capped), { monthly_limit: 0.001 });
    expect(set.status).toBe(200);
    const { start, end } = monthOf(Date.now());
    expect(set.body.data).toEqual({
      monthly_limit: 0.001,
      currency: 'USD',
      spent: 0,
      remaining: 0.001,
      period_start: new Date(start).toISOString(),
      period_end: new Date(end).toISOString(),
    });

    // Under the limit when it starts: it runs (a run in flight is never stopped), and costs more than the limit.
    const first = await completed(alice, capped);
    const stored = await storedRun(first);
    expect(Number(stored.cost_nanos)).toBeGreaterThan(1_000_000);
    expect(stored.cost_currency).toBe('USD');
    const spent = Number(stored.cost_nanos) / 1e9;

    const read = await call(alice, 'GET', budgetPath(capped));
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ monthly_limit: 0.001, spent, remaining: 0 });

    const refused = await run(alice, capped);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    const untilMonthEnd = (end - Date.now()) / 1000;
    expect(retryAfter).toBeGreaterThan(untilMonthEnd - 60);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(untilMonthEnd) + 1);
    expect(refused.body).toMatchObject({
      status: 429,
      code: 'budget_exhausted',
      detail: `The monthly budget of workflow ${capped} is spent: ${spent} of 0.001 USD since ${new Date(start).toISOString()}; it resets at ${new Date(end).toISOString()}.`,
    });
    // No run was stored for the refused start.
    expect(Number((await server.ctx.db('runs').where({ workflow_id: capped }).count({ n: '*' }))[0]!.n)).toBe(1);

    // A retry and a node test are starts too.
    const retried = await call(alice, 'POST', `/api/workflows/${capped}/runs/${first}/retry`);
    expect(retried.status).toBe(409); // a completed run is not retried: that rule comes first
    const tested = await call(alice, 'POST', `/api/workflows/${capped}/nodes/summarise/test`, {
      upstream: { input: 'x' },
    });
    expect(tested.status).toBe(429);
    expect(tested.body.code).toBe('budget_exhausted');

    // A trigger URL's start is answered the same 429; a schedule's tick starts nothing and says why.
    const trigger = await call(alice, 'POST', `/api/workflows/${capped}/triggers`, { name: 'inbox' });
    expect(trigger.status).toBe(201);
    const hooked = await fetch((trigger.body.data as { url: string }).url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'Printer on fire',
    });
    expect(hooked.status).toBe(429);
    expect(((await hooked.json()) as Json).code).toBe('budget_exhausted');
    const schedule = await call(alice, 'POST', `/api/workflows/${capped}/schedules`, {
      cron: '0 8 * * 1-5',
      inputs: { ticket: 'Printer on fire' },
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    const scheduleId = (schedule.body.data as { id: string }).id;
    // A tick as pg-boss hands it to a worker (src/schedules/schedules.test.ts does the same).
    await runTick({ ...server.ctx, runs: server.ctx.runs! }, { hit: () => null }, scheduleId, 'budget-tick');
    const ticked = await call(alice, 'GET', `/api/workflows/${capped}/schedules/${scheduleId}`);
    expect(ticked.body.data).toMatchObject({ last_run_id: null });
    expect(String((ticked.body.data as Json).last_error)).toMatch(
      new RegExp(`^The monthly budget of workflow ${capped} is spent`),
    );
    expect(Number((await server.ctx.db('runs').where({ workflow_id: capped }).count({ n: '*' }))[0]!.n)).toBe(1);

    await completed(alice, free);
    await completed(bob, bobs);

    // Raising the limit lets runs start again; removing it too.
    expect((await call(alice, 'PUT', budgetPath(capped), { monthly_limit: 100 })).status).toBe(200);
    await completed(alice, capped);
    expect((await call(alice, 'PUT', budgetPath(capped), { monthly_limit: 0.001 })).status).toBe(200);
    expect((await run(alice, capped)).status).toBe(429);
    expect((await call(alice, 'DELETE', budgetPath(capped))).status).toBe(204);
    await completed(alice, capped);
  });

  it('refuses the runs started with an API key once they cost its budget, not those of another key; the run records its key', async () => {
    const [first, second] = await userWithKeys(server.ctx, 'budget-carol');
    const wf = await workflowOf(first);
    // Any of the user's keys manages the budgets of all the user's keys.
    const set = await call(first, 'PUT', keyBudgetPath(second), { monthly_limit: 0.000001 });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ monthly_limit: 0.000001, currency: 'USD', spent: 0 });

    const bySecond = await completed(second, wf);
    expect((await storedRun(bySecond)).access_token_id).toBe(second.id);
    const refused = await run(second, wf);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'budget_exhausted' });
    expect(String(refused.body.detail)).toMatch(new RegExp(`^The monthly budget of API key ${second.id} is spent: `));

    const byFirst = await completed(first, wf);
    expect((await storedRun(byFirst)).access_token_id).toBe(first.id);
    const read = await call(first, 'GET', keyBudgetPath(second));
    expect(read.body.data).toMatchObject({ remaining: 0 });
    // The key's spend is its own runs': the first key's run is not in it.
    expect((read.body.data as { spent: number }).spent).toBe(Number((await storedRun(bySecond)).cost_nanos) / 1e9);
  });

  it('refuses to retry a failed run once the budget is spent; the replay of a start already made is answered as before', async () => {
    const [hana] = await userWithKeys(server.ctx, 'budget-hana');
    const wf = await workflowOf(hana);
    const startOnce = () =>
      fetch(`${server.baseUrl}/api/workflows/${wf}/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${hana.token}`,
          'content-type': 'application/json',
          'idempotency-key': 'budget-replay',
          prefer: 'wait=30',
        },
        body: JSON.stringify({ inputs: { ticket: 'Printer on fire' } }),
      });
    expect((await startOnce()).status).toBe(200);
    fake.replies.push({ kind: 'error', status: 400, message: 'Bad prompt.', code: 'bad_prompt' });
    const failed = await run(hana, wf);
    expect((failed.body.data as { status: string }).status).toBe('failed');
    expect((await call(hana, 'PUT', budgetPath(wf), { monthly_limit: 0.001 })).status).toBe(200);

    const retried = await call(
      hana,
      'POST',
      `/api/workflows/${wf}/runs/${(failed.body.data as { id: string }).id}/retry`,
    );
    expect(retried.status).toBe(429);
    expect(retried.body.code).toBe('budget_exhausted');
    expect(retried.headers.get('retry-after')).toMatch(/^\d+$/);
    // Not a new start: the run that key started is answered again.
    expect((await startOnce()).status).toBe(200);
  });

  it('counts this calendar month only: runs started last month do not spend this month', async () => {
    const [dave] = await userWithKeys(server.ctx, 'budget-dave');
    const wf = await workflowOf(dave);
    expect((await call(dave, 'PUT', budgetPath(wf), { monthly_limit: 0.001 })).status).toBe(200);
    const spentRun = await completed(dave, wf);
    expect((await run(dave, wf)).status).toBe(429);

    // The same run, as if started last month: this month's spend is 0 again.
    const lastMonth = monthOf(Date.now()).start - 1;
    await server.ctx.db('runs').where({ id: spentRun }).update({ created_at: lastMonth });
    const read = await call(dave, 'GET', budgetPath(wf));
    expect(read.body.data).toMatchObject({ spent: 0, remaining: 0.001 });
    await completed(dave, wf);
  });

  it('refuses foreign, unknown and malformed budget requests with the documented problems', async () => {
    const [erin, erinSecond] = await userWithKeys(server.ctx, 'budget-erin');
    const [frank] = await userWithKeys(server.ctx, 'budget-frank');
    const wf = await workflowOf(erin);

    // Not set yet: no limit, this month's spend all the same; removing none is done already.
    const unset = await call(erin, 'GET', budgetPath(wf));
    expect(unset.status).toBe(200);
    expect(unset.body.data).toMatchObject({ monthly_limit: null, remaining: null, currency: 'USD', spent: 0 });
    expect((await call(erin, 'DELETE', keyBudgetPath(erinSecond))).status).toBe(204);
    expect((await call(erin, 'PUT', keyBudgetPath(erinSecond), { monthly_limit: 5 })).status).toBe(200);

    // Another user's workflow or key is not found, for every method; nothing of erin's changes.
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? { monthly_limit: 1 } : undefined;
      expect((await call(frank, method, budgetPath(wf), body)).body).toMatchObject({
        status: 404,
        code: 'workflow_not_found',
      });
      expect((await call(frank, method, keyBudgetPath(erinSecond), body)).body).toMatchObject({
        status: 404,
        code: 'access_token_not_found',
      });
    }
    expect((await call(erin, 'GET', keyBudgetPath(erinSecond))).body.data).toMatchObject({ monthly_limit: 5 });
    expect((await call(erin, 'GET', '/api/access-tokens/2147483647/budget')).body).toMatchObject({
      code: 'access_token_not_found',
    });

    // Malformed: a limit of 0 or below, absurdly large, of another type, missing, extra fields, a bad id.
    for (const body of [
      { monthly_limit: 0 },
      { monthly_limit: -1 },
      { monthly_limit: 1e10 },
      { monthly_limit: '10' },
      {},
      { monthly_limit: 1, currency: 'EUR' },
      '{"monthly_limit":',
    ]) {
      const res = await call(erin, 'PUT', budgetPath(wf), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
    expect((await call(erin, 'GET', '/api/access-tokens/abc/budget')).status).toBe(400);
    expect((await call(erin, 'GET', '/api/access-tokens/0/budget')).status).toBe(400);
    expect((await call(erin, 'GET', budgetPath(wf))).body.data).toMatchObject({ monthly_limit: null });
  });

  it('refuses to set a budget without a price table (409 prices_not_configured)', async () => {
    const user = await createUser(unpriced.ctx, { login: 'budget-gina', password: 'correct horse battery' });
    const key = await keyOf(unpriced.ctx, user.id, 'budget-gina', 'only');
    const wf = await workflowOf(key, unpriced);
    const res = await call(key, 'PUT', budgetPath(wf), { monthly_limit: 1 }, unpriced);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'prices_not_configured' });
    expect((await call(key, 'PUT', keyBudgetPath(key), { monthly_limit: 1 }, unpriced)).status).toBe(409);
  });
});
