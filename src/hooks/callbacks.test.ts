// Run-ended callbacks through a real HTTP server, a real store (PostgreSQL;
// MariaDB too when TEST_MYSQL_URL is set), a real pg-boss queue with an in-process worker, and a
// real receiver that verifies each delivery with the npm `standardwebhooks` library.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { CALLBACK_QUEUE, CALLBACK_RETRY, shortestRetrySpanSeconds, startCallbackDeliveries } from './deliveries.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1: /ok answers 204, /flaky 503 twice then 200, /down always 500. */
async function startReceiver(): Promise<{ port: number; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      const seen = received.filter((r) => r.path === req.url).length;
      const status = req.url === '/ok' ? 204 : req.url === '/flaky' ? (seen <= 2 ? 503 : 200) : 500;
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, received, server };
}

async function until<T>(
  what: string,
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe.each(testDialects())('run-ended callbacks on %s', (dialect) => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let alice: ApiClient;
  let bob: ApiClient;
  let base: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    base = `http://localhost:${receiver.port}`;
    server = await startTestServer({
      dialect,
      runs: true,
      // The receiver is on this machine: the operator's allow-list lets `localhost` through the guard.
      env: { WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost' },
      // Seconds apart instead of the production policy's hours (its span is checked below).
      callbackRetry: { retryLimit: 3, retryDelay: 1, retryBackoff: false },
    });
    for (const [login, set] of [
      ['alice', (c: ApiClient) => (alice = c)],
      ['bob', (c: ApiClient) => (bob = c)],
    ] as const) {
      const user = await createUser(server.ctx, { login, password: 'correct horse battery' });
      const { token } = await createAccessToken(server.ctx, {
        userId: user.id,
        namespace: login,
        name: 'cb',
        usageScenario: 'paid',
        permissions: ['workflows'],
      });
      set(createApiClient(server.baseUrl, { bearer: token }));
    }
  });
  afterAll(async () => {
    await server?.close();
    receiver?.server.close();
  });

  async function workflowWithCallback(
    path: string,
  ): Promise<{ workflowId: string; callback: Schemas['CallbackWithSecret'] }> {
    const wf = await alice.POST('/api/workflows', { body: { name: `cb ${path}`, ...seedGraph('echo') } });
    const workflowId = wf.data!.data.id;
    const { data, error, response } = await alice.POST('/api/workflows/{workflow_id}/callbacks', {
      params: { path: { workflow_id: workflowId } },
      body: { url: `${base}${path}`, description: path },
    });
    if (!data) throw new Error(`callback failed: ${response.status} ${JSON.stringify(error)}`);
    expect(response.status).toBe(201);
    return { workflowId, callback: data.data };
  }

  async function runToEnd(workflowId: string, ticket: string): Promise<Schemas['RunDetail']> {
    const { data } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=10' } },
      body: { inputs: { ticket } },
    });
    expect(data!.data.status).toBe('completed');
    return data!.data;
  }

  const attemptsOf = async (workflowId: string, callbackId: string, query: { page?: number; per_page?: number } = {}) =>
    alice.GET('/api/workflows/{workflow_id}/callbacks/{callback_id}/attempts', {
      params: { path: { workflow_id: workflowId, callback_id: callbackId }, query },
    });

  it('POSTs the ended run signed as Standard Webhooks do: the standardwebhooks library verifies it with the whsec_ secret shown once', async () => {
    const { workflowId, callback } = await workflowWithCallback('/ok');
    expect(callback.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await alice.GET('/api/workflows/{workflow_id}/callbacks', {
      params: { path: { workflow_id: workflowId } },
    });
    expect(listed.data!.data).toEqual([
      {
        id: callback.id,
        workflow_id: workflowId,
        url: `${base}/ok`,
        description: '/ok',
        created_at: callback.created_at,
        status: 'active',
        paused_at: null,
        disabled_reason: null,
      },
    ]);
    expect(JSON.stringify(await server.ctx.db('workflow_callbacks').where({ id: callback.id }).first())).not.toContain(
      callback.secret.slice(6),
    );

    const run = await runToEnd(workflowId, 'Signed, sealed, delivered');
    const delivery = await until('the delivery', () => receiver.received.find((r) => r.body.includes(run.id)), Boolean);
    const event = new Webhook(callback.secret).verify(delivery!.body, headersOf(delivery!)) as {
      type: string;
      timestamp: string;
      data: Schemas['Run'];
    };
    expect(event.type).toBe('run.completed');
    expect(event.timestamp).toBe(run.finished_at);
    expect(event.data).toMatchObject({
      id: run.id,
      workflow_id: workflowId,
      status: 'completed',
      output: { result: 'Signed, sealed, delivered' },
      error: null,
      usage: run.usage,
    });
    expect(delivery!.headers['webhook-id']).toMatch(/^msg_/);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(delivery!.body, headersOf(delivery!)),
    ).toThrow();
    expect(() =>
      new Webhook(callback.secret).verify(delivery!.body.replace('Signed', 'Forged'), headersOf(delivery!)),
    ).toThrow();

    const attempts = await until(
      'the attempt',
      () => attemptsOf(workflowId, callback.id),
      (a) => a.data!.data.length === 1,
    );
    expect(attempts.data!.data[0]).toMatchObject({
      message_id: delivery!.headers['webhook-id'],
      run_id: run.id,
      event_type: 'run.completed',
      attempt: 1,
      status: 'succeeded',
      response_status: 204,
      error: null,
    });
  });

  it('retries a failing receiver with the same webhook-id until it answers 2xx, and lists every attempt, paginated', async () => {
    const { workflowId, callback } = await workflowWithCallback('/flaky');
    const run = await runToEnd(workflowId, 'try again');
    const deliveries = await until(
      'three deliveries',
      () => receiver.received.filter((r) => r.path === '/flaky'),
      (d) => d.length === 3,
    );
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(1);
    for (const d of deliveries)
      expect(new Webhook(callback.secret).verify(d.body, headersOf(d))).toMatchObject({ data: { id: run.id } });

    const all = await until(
      'three attempts',
      () => attemptsOf(workflowId, callback.id),
      (a) => a.data!.data.length === 3,
    );
    expect(all.data!.data.map((a) => [a.attempt, a.status, a.response_status])).toEqual([
      [3, 'succeeded', 200],
      [2, 'failed', 503],
      [1, 'failed', 503],
    ]);
    expect(all.data!.data[2]!.error).toBe('The endpoint answered 503.');
    const page = await attemptsOf(workflowId, callback.id, { page: 2, per_page: 1 });
    expect(page.data!.meta).toEqual({ page: 2, per_page: 1, total: 3, total_pages: 3 });
    expect(page.data!.data.map((a) => a.attempt)).toEqual([2]);
    expect(page.response.headers.get('link')).toContain('rel="next"');
  });

  it('gives up after the retry limit: retryLimit + 1 attempts, then the message is failed', async () => {
    const { workflowId, callback } = await workflowWithCallback('/down');
    await runToEnd(workflowId, 'nobody home');
    await until(
      'four attempts',
      () => attemptsOf(workflowId, callback.id),
      (a) => a.data!.data.length === 4,
    );
    const message = await until(
      'the message failed',
      () => server.ctx.db('callback_messages').where({ callback_id: callback.id }).first(),
      (m) => m?.status === 'failed',
    );
    expect(Number(message.attempts)).toBe(4);
  });

  it('refuses a private callback URL: an IP literal when it is made (400), and at delivery a URL the guard refuses (no request sent)', async () => {
    const wf = await alice.POST('/api/workflows', { body: { name: 'private', ...seedGraph('echo') } });
    const path = { workflow_id: wf.data!.data.id };
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      `http://127.0.0.1:${receiver.port}/ok`,
      'http://10.0.0.1/hook',
      'ftp://example.com/x',
    ]) {
      const { error, response } = await alice.POST('/api/workflows/{workflow_id}/callbacks', {
        params: { path },
        body: { url },
      });
      expect(response.status, url).toBe(400);
      if (!url.startsWith('ftp'))
        expect(error, url).toMatchObject({ code: 'callback_url_refused', errors: [{ pointer: '/body/url' }] });
    }
    // A callback made while its URL was allowed, then refused (the operator narrowed the allow-list;
    // here its row is pointed at a refused literal): each delivery is refused by the guard.
    const { workflowId, callback } = await workflowWithCallback('/ok?refused');
    await server.ctx
      .db('workflow_callbacks')
      .where({ id: callback.id })
      .update({ url: `http://127.0.0.1:${receiver.port}/ok?refused` });
    await runToEnd(workflowId, 'stay inside');
    const attempts = await until(
      'refused attempts',
      () => attemptsOf(workflowId, callback.id),
      (a) => a.data!.data.length >= 1,
    );
    expect(attempts.data!.data[0]).toMatchObject({
      status: 'failed',
      response_status: null,
      error: expect.stringMatching(/^http_refused: .*loopback/),
    });
    expect(receiver.received.filter((r) => r.path === '/ok?refused')).toEqual([]);
  });

  it('stops on delete, keeps other users out (404), and bounds callbacks at 10 per workflow', async () => {
    const { workflowId, callback } = await workflowWithCallback('/ok');
    const path = { workflow_id: workflowId, callback_id: callback.id };
    expect(
      (await bob.GET('/api/workflows/{workflow_id}/callbacks', { params: { path: { workflow_id: workflowId } } }))
        .response.status,
    ).toBe(404);
    expect(
      (await bob.GET('/api/workflows/{workflow_id}/callbacks/{callback_id}/attempts', { params: { path } })).response
        .status,
    ).toBe(404);
    expect(
      (await bob.DELETE('/api/workflows/{workflow_id}/callbacks/{callback_id}', { params: { path } })).response.status,
    ).toBe(404);
    expect(
      (await alice.DELETE('/api/workflows/{workflow_id}/callbacks/{callback_id}', { params: { path } })).response
        .status,
    ).toBe(204);
    const run = await runToEnd(workflowId, 'after delete');
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.filter((r) => r.body.includes(run.id))).toEqual([]);
    expect((await attemptsOf(workflowId, callback.id)).response.status).toBe(404);

    for (let i = 0; i < 10; i++)
      await alice.POST('/api/workflows/{workflow_id}/callbacks', {
        params: { path: { workflow_id: workflowId } },
        body: { url: `${base}/ok` },
      });
    const over = await alice.POST('/api/workflows/{workflow_id}/callbacks', {
      params: { path: { workflow_id: workflowId } },
      body: { url: `${base}/ok` },
    });
    expect(over.response.status).toBe(409);
    expect(over.error).toMatchObject({ code: 'hook_limit_reached' });
  });

  it('retries for at least 24 hours in production: pg-boss gets retryLimit/retryDelay/retryBackoff whose shortest span is over a day', async () => {
    expect(shortestRetrySpanSeconds({ retryLimit: 3, retryDelay: 1, retryBackoff: true })).toBe(1 + 2 + 4);
    expect(shortestRetrySpanSeconds({ retryLimit: 3, retryDelay: 1, retryBackoff: true, retryDelayMax: 3 })).toBe(
      1 + 2 + 3,
    );
    expect(shortestRetrySpanSeconds(CALLBACK_RETRY)).toBeGreaterThanOrEqual(24 * 3600);
    // Started with the production policy, the queue carries it (this is the last test of the file: the queue keeps it).
    const boss = server.ctx.runs!.queue.boss;
    await startCallbackDeliveries(server.ctx, boss);
    expect(await boss.getQueue(CALLBACK_QUEUE)).toMatchObject({
      retryLimit: 14,
      retryDelay: 30,
      retryBackoff: true,
      retryDelayMax: 14_400,
    });
  });
});
