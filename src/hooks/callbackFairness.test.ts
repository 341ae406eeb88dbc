// Fair callbacks: per-user and per-callback delivery limits, one user's slow endpoints never
// holding up another's deliveries, and a callback that keeps failing paused until its owner
// re-enables it. A real HTTP server, real stores (PostgreSQL; MariaDB too with TEST_MYSQL_URL), a
// real pg-boss queue with an in-process worker and a real receiver that holds the "slow" requests
// open until the test lets them go: every assertion is on what arrived and in which order, none
// on how long anything took.
import { once } from 'node:events';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { recordAttempt } from './callbacks.store.ts';

interface Receiver {
  port: number;
  server: Server;
  /** Every request, in arrival order: its path and the run it tells of. */
  arrived: Array<{ path: string; runId: string }>;
  /** Requests to /slow/... not answered yet. */
  held: Array<{ path: string; res: ServerResponse }>;
  /** The most requests ever open at once, per path and per path prefix (/slow/alice, ...). */
  maxOpen: Map<string, number>;
  /** /flaky/... answers 500 while this is true. */
  down: boolean;
  releaseAll(): void;
}

async function startReceiver(): Promise<Receiver> {
  const open = new Map<string, number>();
  const bump = (key: string, by: number) => {
    const n = (open.get(key) ?? 0) + by;
    open.set(key, n);
    if (n > (r.maxOpen.get(key) ?? 0)) r.maxOpen.set(key, n);
  };
  const keysOf = (path: string) => [path, path.split('/').slice(0, 3).join('/')];
  const r: Receiver = {
    port: 0,
    server: createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const path = req.url ?? '';
        r.arrived.push({ path, runId: (JSON.parse(body) as { data: { id: string } }).data.id });
        if (path.startsWith('/slow/')) {
          for (const key of keysOf(path)) bump(key, 1);
          res.on('finish', () => keysOf(path).forEach((key) => bump(key, -1)));
          r.held.push({ path, res });
        } else if (path.startsWith('/flaky/')) res.writeHead(r.down ? 500 : 204).end();
        else res.writeHead(204).end();
      });
    }),
    arrived: [],
    held: [],
    maxOpen: new Map(),
    down: true,
    releaseAll() {
      for (const { res } of r.held.splice(0)) res.writeHead(204).end();
    },
  };
  r.server.listen(0, '127.0.0.1');
  await once(r.server, 'listening');
  r.port = (r.server.address() as AddressInfo).port;
  return r;
}

async function until<T>(
  what: string,
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function usersOn(server: TestServer, logins: [string, string]): Promise<[ApiClient, ApiClient]> {
  const clients: ApiClient[] = [];
  for (const login of logins) {
    const user = await createUser(server.ctx, { login, password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: login,
      name: 'cb',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    clients.push(createApiClient(server.baseUrl, { bearer: token }));
  }
  return [clients[0]!, clients[1]!];
}

/** A workflow of `client` with one callback to `url`. */
async function withCallback(
  client: ApiClient,
  url: string,
): Promise<{ workflowId: string; callback: Schemas['CallbackWithSecret'] }> {
  const wf = await client.POST('/api/workflows', { body: { name: `cb ${url}`, ...seedGraph('echo') } });
  const workflowId = wf.data!.data.id;
  const { data, error, response } = await client.POST('/api/workflows/{workflow_id}/callbacks', {
    params: { path: { workflow_id: workflowId } },
    body: { url },
  });
  if (!data) throw new Error(`callback failed: ${response.status} ${JSON.stringify(error)}`);
  return { workflowId, callback: data.data };
}

async function runToEnd(client: ApiClient, workflowId: string): Promise<string> {
  const { data } = await client.POST('/api/workflows/{workflow_id}/run', {
    params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=10' } },
    body: { inputs: { ticket: 'fair' } },
  });
  expect(data!.data.status).toBe('completed');
  return data!.data.id;
}

describe.each(testDialects())('fair callback deliveries on %s', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost',
        // Four slots, two for one user, one per callback; held requests never time out here.
        CALLBACK_CONCURRENCY: '4',
        CALLBACK_USER_CONCURRENCY: '2',
        CALLBACK_ENDPOINT_CONCURRENCY: '1',
        CALLBACK_TIMEOUT_MS: '60000',
      },
      callbackRetry: { retryLimit: 3, retryDelay: 1, retryBackoff: false },
    });
    [alice, bob] = await usersOn(server, ['alice', 'bob']);
  });
  afterAll(async () => {
    receiver?.releaseAll();
    await server?.close();
    receiver?.server.close();
  });

  it("holds a user to CALLBACK_USER_CONCURRENCY and a callback to CALLBACK_ENDPOINT_CONCURRENCY, and another user's delivery goes out while the slow ones hang", async () => {
    const base = `http://localhost:${receiver.port}`;
    // Alice: three slow endpoints, two run ends each (six deliveries that would fill every slot first come, first served).
    const slow = await Promise.all(['a1', 'a2', 'a3'].map((name) => withCallback(alice, `${base}/slow/alice/${name}`)));
    const aliceRuns: string[] = [];
    for (const { workflowId } of slow) for (let i = 0; i < 2; i++) aliceRuns.push(await runToEnd(alice, workflowId));
    await until(
      "alice's deliveries held",
      () => receiver.held.length,
      (n) => n >= 2,
    );

    // Bob's run ends after all of alice's: his delivery still goes out while hers hang.
    const bobs = await withCallback(bob, `${base}/ok/bob`);
    const bobRun = await runToEnd(bob, bobs.workflowId);
    await until(
      "bob's delivery",
      () => receiver.arrived.filter((a) => a.runId === bobRun),
      (a) => a.length === 1,
    );
    expect(receiver.held.length).toBe(2); // alice is at her limit: nothing more of hers was taken
    expect(new Set(receiver.held.map((h) => h.path)).size).toBe(2); // on two different callbacks
    expect(receiver.arrived.filter((a) => a.path.startsWith('/slow/')).length).toBe(2);

    // Let hers go, two at a time: all six arrive, never more than two at once, never two to one callback.
    for (let delivered = 0; delivered < 6;) {
      await until(
        'held deliveries',
        () => receiver.held.length,
        (n) => n > 0,
      );
      delivered += receiver.held.length;
      receiver.releaseAll();
    }
    await until(
      "alice's six deliveries",
      () => receiver.arrived.filter((a) => a.path.startsWith('/slow/')),
      (a) => a.length === 6,
    );
    expect(new Set(receiver.arrived.filter((a) => a.path.startsWith('/slow/')).map((a) => a.runId))).toEqual(
      new Set(aliceRuns),
    );
    expect(receiver.maxOpen.get('/slow/alice')).toBe(2);
    for (const name of ['a1', 'a2', 'a3']) expect(receiver.maxOpen.get(`/slow/alice/${name}`)).toBe(1);
  });
});

describe.each(testDialects())('paused callbacks on %s', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost',
        CALLBACK_PAUSE_AFTER_FAILURES: '3',
        CALLBACK_PAUSE_AFTER_SECONDS: '0',
      },
      callbackRetry: { retryLimit: 5, retryDelay: 1, retryBackoff: false },
    });
    [alice, bob] = await usersOn(server, ['alice', 'bob']);
  });
  afterAll(async () => {
    await server?.close();
    receiver?.server.close();
  });

  it('pauses a callback after CALLBACK_PAUSE_AFTER_FAILURES failed attempts, sends nothing while paused, and only its owner re-enables it', async () => {
    const base = `http://localhost:${receiver.port}`;
    const { workflowId, callback } = await withCallback(alice, `${base}/flaky/alice`);
    const path = { workflow_id: workflowId, callback_id: callback.id };
    const listed = async () =>
      (await alice.GET('/api/workflows/{workflow_id}/callbacks', { params: { path: { workflow_id: workflowId } } }))
        .data!.data[0]!;
    expect(await listed()).toMatchObject({ status: 'active', paused_at: null, disabled_reason: null });

    const first = await runToEnd(alice, workflowId);
    const paused = await until('the callback paused', listed, (c) => c.status === 'paused');
    expect(paused.paused_at).toEqual(expect.any(String));
    expect(paused.disabled_reason).toMatch(
      /^3 consecutive failed attempts since .*; the last: The endpoint answered 500\.$/,
    );
    expect(receiver.arrived.filter((a) => a.path === '/flaky/alice').length).toBe(3);

    // While paused: another run end is kept, not sent. Bob's delivery, queued after it, arriving
    // shows the worker went past it.
    const second = await runToEnd(alice, workflowId);
    const bobs = await withCallback(bob, `${base}/ok/bob`);
    const bobRun = await runToEnd(bob, bobs.workflowId);
    await until(
      "bob's delivery",
      () => receiver.arrived.filter((a) => a.runId === bobRun),
      (a) => a.length === 1,
    );
    expect(receiver.arrived.filter((a) => a.path === '/flaky/alice').map((a) => a.runId)).toEqual([
      first,
      first,
      first,
    ]);
    const messages = await server.ctx.db('callback_messages').where({ callback_id: callback.id }).orderBy('seq');
    expect(
      messages.map((m: { run_id: string; status: string; attempts: number }) => [
        m.run_id,
        m.status,
        Number(m.attempts),
      ]),
    ).toEqual([
      [first, 'pending', 3],
      [second, 'pending', 0],
    ]);

    // Not bob's to enable: 404, and it stays paused.
    const foreign = await bob.POST('/api/workflows/{workflow_id}/callbacks/{callback_id}/enable', { params: { path } });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: 'workflow_not_found' });
    expect((await listed()).status).toBe('paused');

    // Its owner enables it (the endpoint is up again): both held-back run ends are delivered.
    receiver.down = false;
    const enabled = await alice.POST('/api/workflows/{workflow_id}/callbacks/{callback_id}/enable', {
      params: { path },
    });
    expect(enabled.response.status).toBe(200);
    expect(enabled.data!.data).toMatchObject({
      id: callback.id,
      status: 'active',
      paused_at: null,
      disabled_reason: null,
    });
    await until(
      'both messages delivered',
      () => server.ctx.db('callback_messages').where({ callback_id: callback.id, status: 'delivered' }),
      (m) => m.length === 2,
    );
    const attempts = (
      await alice.GET('/api/workflows/{workflow_id}/callbacks/{callback_id}/attempts', { params: { path } })
    ).data!.data;
    expect(
      attempts
        .filter((a) => a.status === 'succeeded')
        .map((a) => [a.run_id, a.attempt])
        .sort(),
    ).toEqual(
      [
        [first, 4],
        [second, 1],
      ].sort(),
    );

    // Enabling an active callback changes nothing; an unknown callback is 404.
    expect(
      (await alice.POST('/api/workflows/{workflow_id}/callbacks/{callback_id}/enable', { params: { path } })).data!.data
        .status,
    ).toBe('active');
    const unknown = await alice.POST('/api/workflows/{workflow_id}/callbacks/{callback_id}/enable', {
      params: { path: { ...path, callback_id: 'cb_nope' } },
    });
    expect(unknown.error).toMatchObject({ code: 'callback_not_found' });
  });

  it('pauses only when both hold: CALLBACK_PAUSE_AFTER_FAILURES failures in a row, the first CALLBACK_PAUSE_AFTER_SECONDS ago; a success starts the streak again', async () => {
    const { workflowId, callback } = await withCallback(alice, `http://localhost:${receiver.port}/ok/streak`);
    const run = await runToEnd(alice, workflowId);
    // Its one real delivery settled first: from here on only these attempts touch the streak.
    const message = await until(
      'the message delivered',
      () => server.ctx.db('callback_messages').where({ callback_id: callback.id }).first(),
      (m) => m?.status === 'delivered',
    );
    const rule = { failures: 2, periodMs: 60_000 };
    const t0 = Date.now();
    let n = 0;
    const attempt = (at: number, status: 'succeeded' | 'failed') =>
      recordAttempt(
        server.ctx.db,
        {
          message_id: message.id,
          callback_id: callback.id,
          attempt: ++n,
          status,
          response_status: 500,
          error: 'The endpoint answered 500.',
          duration_ms: 1,
          attempted_at: at,
        },
        'pending',
        rule,
      );
    const state = async () => server.ctx.db('workflow_callbacks').where({ id: callback.id }).first();

    expect(await attempt(t0, 'failed')).toBe(false);
    expect(await attempt(t0 + 30_000, 'failed')).toBe(false); // two in a row, but for 30 s only
    expect(await attempt(t0 + 61_000, 'succeeded')).toBe(false); // the streak ends
    expect(await state()).toMatchObject({ status: 'active', failing_since: null });
    expect(Number((await state()).consecutive_failures)).toBe(0);
    expect(await attempt(t0 + 62_000, 'failed')).toBe(false);
    expect(await attempt(t0 + 100_000, 'failed')).toBe(false); // 38 s since the streak began
    expect(await attempt(t0 + 122_000, 'failed')).toBe(true); // three in a row, over 60 s
    expect(await state()).toMatchObject({
      status: 'paused',
      disabled_reason: expect.stringMatching(/^3 consecutive failed attempts since /),
    });
    expect(Number((await state()).paused_at)).toBe(t0 + 122_000);
    expect(await attempt(t0 + 130_000, 'failed')).toBe(false); // already paused
    expect(run).toMatch(/^run_/);
  });
});

describe.each(testDialects())('the callback attempt timeout on %s', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  let alice: ApiClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({
      dialect,
      runs: true,
      env: { WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost', CALLBACK_TIMEOUT_MS: '300' },
      callbackRetry: { retryLimit: 1, retryDelay: 1, retryBackoff: false },
    });
    [alice] = await usersOn(server, ['alice', 'bob']);
  });
  afterAll(async () => {
    receiver?.releaseAll();
    await server?.close();
    receiver?.server.close();
  });

  it('gives up on an endpoint that does not answer within CALLBACK_TIMEOUT_MS: a failed attempt (no status), retried', async () => {
    const { workflowId, callback } = await withCallback(alice, `http://localhost:${receiver.port}/slow/never`);
    await runToEnd(alice, workflowId);
    const path = { workflow_id: workflowId, callback_id: callback.id };
    const attempts = await until(
      'two attempts',
      async () =>
        (await alice.GET('/api/workflows/{workflow_id}/callbacks/{callback_id}/attempts', { params: { path } })).data!
          .data,
      (a) => a.length === 2,
    );
    for (const a of attempts)
      expect(a).toMatchObject({
        status: 'failed',
        response_status: null,
        error: 'http_timeout: No whole answer within 0.3 s.',
      });
    expect(attempts.map((a) => a.attempt)).toEqual([2, 1]);
  });
});
