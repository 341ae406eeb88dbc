// Trigger URLs through a real HTTP server, a real store (PostgreSQL; MariaDB too
// when TEST_MYSQL_URL is set) and a real pg-boss queue with an in-process worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { hashToken } from '../shared/crypto.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type TriggerWithUrl = Schemas['TriggerWithUrl'];

const clientFor = (server: TestServer, login: string) => workflowsClient(server.ctx, server.baseUrl, login);

async function createWorkflow(client: ApiClient): Promise<string> {
  const { data, error } = await client.POST('/api/workflows', { body: { name: 'hooked', ...seedGraph('echo') } });
  if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
  return data.data.id;
}

async function createTrigger(client: ApiClient, workflowId: string, name = 'GitHub push'): Promise<TriggerWithUrl> {
  const { data, error, response } = await client.POST('/api/workflows/{workflow_id}/triggers', {
    params: { path: { workflow_id: workflowId } },
    body: { name },
  });
  if (!data) throw new Error(`trigger failed: ${response.status} ${JSON.stringify(error)}`);
  expect(response.status).toBe(201);
  return data.data;
}

/** A POST to a trigger URL, as a third party's webhook sender makes it (no credentials). */
function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const BODY_LIMIT = 4096;
const RUNS_PER_MINUTE = 20; // room for the other tests' starts by alice

describe.each(testDialects())('trigger URLs on %s', (dialect) => {
  let server: TestServer;
  let ctx: AppContext;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      runs: true,
      env: { BODY_LIMIT_BYTES: String(BODY_LIMIT), USER_RUNS_PER_MINUTE: String(RUNS_PER_MINUTE) },
    });
    ctx = server.ctx;
    alice = await clientFor(server, 'alice');
    bob = await clientFor(server, 'bob');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('shows the URL once: created with a 256-bit wht_ token under BASE_URL/hooks, listed by prefix only, stored as a hash', async () => {
    const workflowId = await createWorkflow(alice);
    const trigger = await createTrigger(alice, workflowId);
    const token = trigger.url.slice(`${server.baseUrl}/hooks/`.length);
    expect(trigger.url.startsWith(`${server.baseUrl}/hooks/wht_`)).toBe(true);
    expect(token).toMatch(/^wht_[A-Za-z0-9_-]{43}$/); // 43 base64url characters: 256 bits
    expect(trigger).toMatchObject({
      id: expect.stringMatching(/^trg_/),
      workflow_id: workflowId,
      name: 'GitHub push',
      token_prefix: token.slice(0, 12),
      last_used_at: null,
    });

    const { data, response } = await alice.GET('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(data!.data).toEqual([
      {
        id: trigger.id,
        workflow_id: workflowId,
        name: 'GitHub push',
        token_prefix: token.slice(0, 12),
        created_at: trigger.created_at,
        last_used_at: null,
      },
    ]);
    expect(data!.meta).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1 });
    expect(response.headers.get('link')).toContain(
      `</api/workflows/${workflowId}/triggers?page=1&per_page=20>; rel="first"`,
    );
    expect(JSON.stringify(data)).not.toContain(token.slice(12));

    const row = await ctx.db('workflow_triggers').where({ id: trigger.id }).first();
    expect(row.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(row)).not.toContain(token.slice(12));
  });

  it('starts a run with the JSON body as inputs: 202 with the run and its Location, and the trigger is marked used', async () => {
    const workflowId = await createWorkflow(alice);
    const trigger = await createTrigger(alice, workflowId);
    const res = await post(trigger.url, { ticket: 'Export fails on Safari' });
    expect(res.status).toBe(202);
    const { data: run } = (await res.json()) as { data: Schemas['RunDetail'] };
    expect(run).toMatchObject({
      workflow_id: workflowId,
      status: 'queued',
      inputs: { ticket: 'Export fails on Safari' },
      logs: [],
    });
    expect(res.headers.get('location')).toBe(`/api/workflows/${workflowId}/runs/${run.id}`);

    const ended = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: run.id }, header: { Prefer: 'wait=10' } },
    });
    expect(ended.data!.data).toMatchObject({ status: 'completed', output: { result: 'Export fails on Safari' } });
    const listed = await alice.GET('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(listed.data!.data[0]!.last_used_at).not.toBeNull();
    // The URL is a credential: the request's log line keeps only its public prefix.
    const token = trigger.url.slice(`${server.baseUrl}/hooks/`.length);
    const logged = server.logs.join('');
    expect(logged).toContain(`/hooks/${token.slice(0, 12)}[redacted]`);
    expect(logged).not.toContain(token.slice(12));
  });

  it('answers 200 with the ended run under Prefer: wait, as POST .../run does', async () => {
    const trigger = await createTrigger(alice, await createWorkflow(alice));
    const res = await post(trigger.url, { ticket: 'wait for me' }, { Prefer: 'wait=10' });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=10');
    expect(((await res.json()) as { data: Schemas['RunDetail'] }).data).toMatchObject({
      status: 'completed',
      output: { result: 'wait for me' },
    });
  });

  it('honours Idempotency-Key: the same key returns the same run, other inputs with it are 409', async () => {
    const trigger = await createTrigger(alice, await createWorkflow(alice));
    const first = (await (await post(trigger.url, { ticket: 'once' }, { 'Idempotency-Key': 'delivery-1' })).json()) as {
      data: { id: string };
    };
    const again = await post(trigger.url, { ticket: 'once' }, { 'Idempotency-Key': 'delivery-1' });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { data: { id: string } }).data.id).toBe(first.data.id);
    const other = await post(trigger.url, { ticket: 'twice' }, { 'Idempotency-Key': 'delivery-1' });
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('gives the documented errors: unknown token 404, bad JSON 400, oversized 413, another media type 415', async () => {
    const trigger = await createTrigger(alice, await createWorkflow(alice));
    const unknown = await post(`${server.baseUrl}/hooks/wht_${'A'.repeat(43)}`, { ticket: 'x' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ status: 404, code: 'trigger_not_found' });
    // Right lookup part, wrong secret: the whole token's hash is compared, not its prefix.
    const forged = await post(`${trigger.url.slice(0, -4)}AAAA`, { ticket: 'x' });
    expect(forged.status).toBe(404);

    const badJson = await post(trigger.url, '{"ticket": ');
    expect(badJson.status).toBe(400);
    expect(badJson.headers.get('content-type')).toContain('application/problem+json');
    const oversized = await post(trigger.url, { ticket: 'x'.repeat(BODY_LIMIT) });
    expect(oversized.status).toBe(413);
    const xml = await fetch(trigger.url, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<ticket>x</ticket>',
    });
    expect(xml.status).toBe(415);
  });

  it('is quota-counted with API starts: USER_RUNS_PER_MINUTE spans both, and the next hook start is 429 with Retry-After', async () => {
    const carol = await clientFor(server, 'carol');
    const workflowId = await createWorkflow(carol);
    const trigger = await createTrigger(carol, workflowId);
    for (let i = 0; i < RUNS_PER_MINUTE / 2; i++) {
      const api = await carol.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=10' } },
        body: { inputs: { ticket: `api ${i}` } },
      });
      expect(api.response.status).toBe(200);
      expect((await post(trigger.url, { ticket: `hook ${i}` }, { Prefer: 'wait=10' })).status).toBe(200);
    }
    const over = await post(trigger.url, { ticket: 'one too many' });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await over.json()).toMatchObject({ code: 'too_many_runs_per_minute' });
  });

  it('rotates: the old URL is 404 at once, the new one starts runs, the trigger keeps its id', async () => {
    const workflowId = await createWorkflow(alice);
    const trigger = await createTrigger(alice, workflowId);
    const { data, response } = await alice.POST('/api/workflows/{workflow_id}/triggers/{trigger_id}/rotate', {
      params: { path: { workflow_id: workflowId, trigger_id: trigger.id } },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ id: trigger.id, name: trigger.name, created_at: trigger.created_at });
    expect(data!.data.url).not.toBe(trigger.url);
    expect((await post(trigger.url, { ticket: 'old' })).status).toBe(404);
    expect((await post(data!.data.url, { ticket: 'new' })).status).toBe(202);
  });

  it("revokes on delete, and a deleted workflow's URLs start nothing", async () => {
    const workflowId = await createWorkflow(alice);
    const [kept, revoked] = [
      await createTrigger(alice, workflowId, 'kept'),
      await createTrigger(alice, workflowId, 'revoked'),
    ];
    const del = await alice.DELETE('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path: { workflow_id: workflowId, trigger_id: revoked.id } },
    });
    expect(del.response.status).toBe(204);
    expect((await post(revoked.url, { ticket: 'x' })).status).toBe(404);
    const again = await alice.DELETE('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
      params: { path: { workflow_id: workflowId, trigger_id: revoked.id } },
    });
    expect(again.response.status).toBe(404);
    expect((await post(kept.url, { ticket: 'x' }, { Prefer: 'wait=10' })).status).toBe(200);

    await alice.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } });
    const gone = await post(kept.url, { ticket: 'x' });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'trigger_not_found' });
  });

  it("keeps another user's workflow out of reach: no trigger made, listed, rotated or deleted on it (404)", async () => {
    const workflowId = await createWorkflow(alice);
    const trigger = await createTrigger(alice, workflowId);
    const path = { workflow_id: workflowId };
    expect(
      (await bob.POST('/api/workflows/{workflow_id}/triggers', { params: { path }, body: {} })).response.status,
    ).toBe(404);
    expect((await bob.GET('/api/workflows/{workflow_id}/triggers', { params: { path } })).response.status).toBe(404);
    expect(
      (
        await bob.POST('/api/workflows/{workflow_id}/triggers/{trigger_id}/rotate', {
          params: { path: { ...path, trigger_id: trigger.id } },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await bob.DELETE('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
          params: { path: { ...path, trigger_id: trigger.id } },
        })
      ).response.status,
    ).toBe(404);
    expect((await post(trigger.url, { ticket: 'still alive' })).status).toBe(202);
  });

  it('bounds the trigger URLs of a workflow at 10 (409 hook_limit_reached)', async () => {
    const workflowId = await createWorkflow(alice);
    for (let i = 0; i < 10; i++) await createTrigger(alice, workflowId, `t${i}`);
    const { error, response } = await alice.POST('/api/workflows/{workflow_id}/triggers', {
      params: { path: { workflow_id: workflowId } },
      body: {},
    });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ code: 'hook_limit_reached' });
  });
});
