// The http_request node through a real service (HTTP server, store, pg-boss worker) calling real
// local HTTP servers: what the operator allowed (WORKFLOW_HTTP_ALLOW_HOSTS=127.0.0.2) is reached,
// with the owner's secrets in it and none of them in the run; loopback, metadata, a name that
// resolves to 127.0.0.1 and a redirect to a private address are refused.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { putSecret } from '../secrets/service.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

type WorkflowNode = Schemas['WorkflowNode'];
const TOKEN = 'tok_9f8e7d6c5b4a-never-in-a-run';
const ODD = `p@ss/"w0rd" & 'more' <x>`;

/** A real HTTP server that records each request and answers by path. */
async function target(host: string) {
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/echo')
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ auth: req.headers.authorization, body: body ? JSON.parse(body) : null }));
      else if (url.pathname === '/reflect') {
        // Echoes the X-Key header the ways servers do: JSON-escaped, URL- and form-encoded, quoted.
        const key = String(req.headers['x-key']);
        const echoes = {
          json: key,
          url: `https://x.example/?k=${encodeURIComponent(key)}`,
          form: new URLSearchParams({ k: key }).toString(),
          quoted: `bad key '${key.replace(/'/g, "\\'")}'`,
        };
        res
          .writeHead(Number(url.searchParams.get('status') ?? 200), { 'Content-Type': 'application/json' })
          .end(JSON.stringify(echoes).replace(/\//g, '\\/'));
      } else if (url.pathname === '/text') res.writeHead(200, { 'Content-Type': 'text/plain' }).end('plain words');
      else if (url.pathname === '/redirect') res.writeHead(302, { Location: url.searchParams.get('to')! }).end();
      else if (url.pathname === '/flaky')
        res.writeHead(seen.filter((s) => s.url === req.url).length < 2 ? 503 : 200).end('finally');
      else res.writeHead(404).end('no such thing');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    seen,
    origin: `http://${host}:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('http_request node', () => {
  let server: TestServer;
  let alice: ApiClient;
  let allowed: Awaited<ReturnType<typeof target>>;
  let loopback: Awaited<ReturnType<typeof target>>;

  beforeAll(async () => {
    allowed = await target('127.0.0.2');
    loopback = await target('127.0.0.1');
    server = await startTestServer({ runs: true, env: { WORKFLOW_HTTP_ALLOW_HOSTS: '127.0.0.2' } });
    const user = await createUser(server.ctx, { login: 'alice', password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'alice',
      name: 'k',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    alice = createApiClient(server.baseUrl, { bearer: token });
    await putSecret(server.ctx, user.id, 'API_TOKEN', TOKEN);
    await putSecret(server.ctx, user.id, 'ODD', ODD);
  });
  afterAll(async () => {
    await server?.close();
    await allowed?.close();
    await loopback?.close();
  });

  /** Runs a workflow input -> call [-> then] -> result to its end (Prefer: wait) and returns the run with its log. */
  async function run(config: Record<string, unknown>, then?: string) {
    const nodes = [
      { id: 'input', type: 'text_input', config: { variable: 'topic' } },
      { id: 'call', type: 'http_request', config },
      ...(then ? [{ id: 'then', type: 'template', config: { template: then } }] : []),
      { id: 'result', type: 'text_output', config: { format: 'plain' } },
    ] as WorkflowNode[];
    const edges = then
      ? [
          { from: 'input', to: 'call' },
          { from: 'call', to: 'then' },
          { from: 'then', to: 'result' },
        ]
      : [
          { from: 'input', to: 'call' },
          { from: 'call', to: 'result' },
        ];
    const created = await alice.POST('/api/workflows', { body: { name: `wf ${Math.random()}`, nodes, edges } });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const path = { workflow_id: created.data!.data.id };
    const started = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path, header: { Prefer: 'wait=30' } },
      body: { inputs: { topic: 'billing' } },
    });
    const detail = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { ...path, run_id: started.data!.data.id } },
    });
    return { run: detail.data!.data, step: detail.data!.data.logs.find((l) => l.node_id === 'call')! };
  }

  it('sends method, rendered URL, headers with the owner’s secret and a JSON body; JSON comes back as the output', async () => {
    const { run: done, step } = await run({
      method: 'POST',
      url: `${allowed.origin}/echo?topic={{ inputs.topic }}`,
      headers: { Authorization: 'Bearer {{ secrets.API_TOKEN }}' },
      body: { topic: '{{ inputs.topic }}', n: 2 },
    });
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const got = allowed.seen.at(-1)!;
    expect(got).toMatchObject({
      method: 'POST',
      url: '/echo?topic=billing',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    expect(JSON.parse(got.body)).toEqual({ topic: 'billing', n: 2 });
    // The secret never reaches the run: its input names it, the echoed value is redacted.
    expect(step.input).toContain('Authorization: Bearer {{ secrets.API_TOKEN }}');
    expect(JSON.parse(step.output!)).toEqual({ auth: 'Bearer [secret API_TOKEN]', body: { topic: 'billing', n: 2 } });
    expect(JSON.stringify(done)).not.toContain(TOKEN);
    expect(server.logs.join('\n')).not.toContain(TOKEN);
    const stored = await server.ctx
      .db('run_steps')
      .where({ run_id: done.id })
      .select('input_preview', 'output_preview');
    expect(JSON.stringify(stored)).not.toContain(TOKEN);
    const events = await server.ctx.db('run_events').where({ run_id: done.id }).pluck('data');
    expect(events.join('\n')).not.toContain(TOKEN);
  });

  it('redacts a secret echoed JSON-escaped, percent- or form-encoded or quoted, in the output and in an error', async () => {
    const ok = await run({ url: `${allowed.origin}/reflect`, headers: { 'X-Key': '{{ secrets.ODD }}' } });
    expect(ok.run.status, JSON.stringify(ok.run.error)).toBe('completed');
    expect(JSON.parse(ok.step.output!)).toEqual({
      json: '[secret ODD]',
      url: 'https://x.example/?k=[secret ODD]',
      form: 'k=[secret ODD]',
      quoted: "bad key '[secret ODD]'",
    });
    const failed = await run({
      url: `${allowed.origin}/reflect?status=401`,
      headers: { 'X-Key': '{{ secrets.ODD }}' },
    });
    expect(failed.run.error).toMatchObject({ code: 'http_status', node_id: 'call' });
    expect(failed.run.error!.message).toContain("bad key '[secret ODD]'");
    for (const shown of [JSON.stringify(ok.run), JSON.stringify(failed.run)]) {
      for (const echo of ['w0rd', encodeURIComponent(ODD), 'p%40ss']) expect(shown).not.toContain(echo);
    }
  });

  it('names a URL that does not parse as written, its secret by name', async () => {
    const { run: failed } = await run({ url: `${allowed.origin}/{{ secrets.ODD }}`.replace('http://', 'http://[') });
    expect(failed.error).toMatchObject({
      code: 'http_invalid_url',
      message: expect.stringContaining('{{ secrets.ODD }}'),
    });
    expect(JSON.stringify(failed)).not.toContain('w0rd');
  });

  it('makes a JSON answer the node’s value: a template downstream reads its fields', async () => {
    const { run: done } = await run(
      { method: 'POST', url: `${allowed.origin}/echo`, body: { topic: '{{ inputs.topic }}' } },
      'topic={{ nodes.call.output.body.topic }}',
    );
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.output).toEqual({ result: 'topic=billing' });
  });

  it('takes a text answer as text, and retries a 503 as retry says', async () => {
    expect((await run({ url: `${allowed.origin}/text` })).step.output).toBe('plain words');
    const flaky = await run({
      url: `${allowed.origin}/flaky?n=${Math.random()}`,
      retry: { max_attempts: 3, backoff_seconds: 0.01 },
    });
    expect(flaky.step).toMatchObject({ status: 'completed', output: 'finally', attempts: 2 });
    // The retry is an event of the run, before the node's end.
    const events = (await server.ctx
      .db('run_events')
      .where({ run_id: flaky.run.id })
      .orderBy('seq')
      .select('type', 'data')) as { type: string; data: string }[];
    const call = events.filter((e) => (JSON.parse(e.data) as { node_id?: string }).node_id === 'call');
    expect(call.map((e) => e.type)).toEqual(['node.started', 'node.retry', 'node.finished']);
    expect(JSON.parse(call[1]!.data)).toEqual({
      node_id: 'call',
      attempt: 2,
      error: { code: 'http_status', message: 'The server answered 503.' },
      delay_ms: 10,
      failed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
    });
  });

  it('fails the node with http_status on a 404 (on_error: continue goes on with an empty output)', async () => {
    expect((await run({ url: `${allowed.origin}/missing` })).run.error).toMatchObject({
      code: 'http_status',
      node_id: 'call',
    });
    const goingOn = await run({ url: `${allowed.origin}/missing`, on_error: 'continue' });
    expect(goingOn.run.status).toBe('completed');
    expect(goingOn.step).toMatchObject({ status: 'failed', error: { code: 'http_status' } });
  });

  it.each([
    ['loopback (127.0.0.1)', () => `${loopback.origin}/echo`],
    ['the metadata address 169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    [
      'a name that resolves to 127.0.0.1 (localhost)',
      () => loopback.origin.replace('127.0.0.1', 'localhost') + '/echo',
    ],
    [
      'a redirect to a private address',
      () => `${allowed.origin}/redirect?to=${encodeURIComponent('http://10.0.0.1/')}`,
    ],
    ['a redirect to loopback', () => `${allowed.origin}/redirect?to=${encodeURIComponent(loopback.origin + '/echo')}`],
  ])('refuses %s: the node fails with http_refused and nothing reaches it', async (_what, url) => {
    const before = loopback.seen.length;
    const { run: failed } = await run({ url: url(), headers: { Authorization: 'Bearer {{ secrets.API_TOKEN }}' } });
    expect(failed.error).toMatchObject({ code: 'http_refused', node_id: 'call' });
    expect(loopback.seen.length).toBe(before);
  });

  it('fails with secret_not_found for a secret the owner does not have', async () => {
    const { run: failed } = await run({ url: `${allowed.origin}/echo`, headers: { 'X-Key': '{{ secrets.NOPE }}' } });
    expect(failed.error).toMatchObject({ code: 'secret_not_found', message: expect.stringContaining('NOPE') });
  });

  it('refuses with 422 a secret outside url and headers, a filter on one, and a body with GET', async () => {
    const nodes = [
      {
        id: 'call',
        type: 'http_request',
        config: { url: 'https://api.example.com/{{ secrets.A | upcase }}', body: { k: '{{ secrets.A }}' } },
      },
    ] as WorkflowNode[];
    const { error, response } = await alice.POST('/api/workflows', { body: { name: 'bad', nodes, edges: [] } });
    expect(response.status).toBe(422);
    expect(error!.errors).toEqual(
      expect.arrayContaining([
        {
          pointer: '/nodes/0/config/url',
          message: 'a secret is written {{ secrets.NAME }}, with no filter or tag on it',
        },
        {
          pointer: '/nodes/0/config/body/k',
          message: 'secrets may be sent only in url and headers, as {{ secrets.NAME }}',
        },
        { pointer: '/nodes/0/config/body', message: 'is not sent with GET: use POST, PUT, PATCH or DELETE' },
      ]),
    );
  });
});
