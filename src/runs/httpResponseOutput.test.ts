// http_request with `output: response` through a real service calling a real local HTTP server
// (allowed by WORKFLOW_HTTP_ALLOW_HOSTS=127.0.0.2, as in httpRequest.test.ts): the node's output is
// `{status, headers, body}`, a 404 completes it, and a switch routes on the status.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAndRun } from '../../test/support/workflowUsers.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { putSecret } from '../secrets/service.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

type WorkflowNode = Schemas['WorkflowNode'];
const SECRET = 'sk_live_echoed-in-a-header';

describe('http_request output: response', () => {
  let server: TestServer;
  let alice: ApiClient;
  let target: Server;
  let origin: string;

  beforeAll(async () => {
    target = createServer((req, res) => {
      if (req.url === '/found')
        res
          .writeHead(200, {
            'Content-Type': 'application/json',
            'X-Echo': String(req.headers['x-key'] ?? ''),
            'X-Long': 'a'.repeat(5000),
          })
          .end(JSON.stringify({ id: 7 }));
      else res.writeHead(404, { 'Content-Type': 'application/json' }).end('<html>not found</html>');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.2', resolve));
    origin = `http://127.0.0.2:${(target.address() as AddressInfo).port}`;
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
    await putSecret(server.ctx, user.id, 'KEY', SECRET);
  });
  afterAll(async () => {
    await server?.close();
    await new Promise<void>((r) => (target ? target.close(() => r()) : r()));
  });

  /** input(path) -> call -> route on status: ok / missing -> join -> result. */
  async function routed(config: Record<string, unknown>, path: string) {
    const nodes = [
      { id: 'input', type: 'text_input', config: { variable: 'path' } },
      { id: 'call', type: 'http_request', config: { url: `${origin}/{{ inputs.path }}`, ...config } },
      {
        id: 'route',
        type: 'switch',
        config: { value: 'nodes.call.output.status', cases: [{ name: 'ok', operator: '==', value: 200 }] },
      },
      { id: 'ok', type: 'template', config: { template: 'found {{ nodes.call.output.body.id }}' } },
      { id: 'missing', type: 'template', config: { template: 'missing ({{ nodes.call.output.status }})' } },
      { id: 'join', type: 'coalesce', config: {} },
      { id: 'result', type: 'text_output', config: { format: 'plain' } },
    ] as WorkflowNode[];
    const edges = [
      { from: 'input', to: 'call' },
      { from: 'call', to: 'route' },
      { from: 'route', to: 'ok', case: 'ok' },
      { from: 'route', to: 'missing', case: 'default' },
      { from: 'ok', to: 'join' },
      { from: 'missing', to: 'join' },
      { from: 'join', to: 'result' },
    ];
    const created = await alice.POST('/api/workflows', { body: { name: `wf ${Math.random()}`, nodes, edges } });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const ids = { workflow_id: created.data!.data.id };
    const started = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: ids, header: { Prefer: 'wait=30' } },
      body: { inputs: { path } },
    });
    const detail = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { ...ids, run_id: started.data!.data.id } },
    });
    const run = detail.data!.data;
    return { run, call: run.logs.find((l) => l.node_id === 'call')! };
  }

  it('routes a 200 and a 404 by status; the output holds status, lower-case headers and the body', async () => {
    const found = await routed({ output: 'response', headers: { 'X-Key': '{{ secrets.KEY }}' } }, 'found');
    expect(found.run.status, JSON.stringify(found.run.error)).toBe('completed');
    expect(found.run.output).toEqual({ result: 'found 7' });
    const output = JSON.parse(found.call.output!) as { status: number; headers: Record<string, string>; body: unknown };
    expect(output.status).toBe(200);
    expect(output.body).toEqual({ id: 7 });
    expect(output.headers['content-type']).toBe('application/json');
    // A secret the server echoes in a header is redacted; a long value is cut.
    expect(output.headers['x-echo']).toBe('[secret KEY]');
    expect(output.headers['x-long']).toHaveLength(1000);
    expect(JSON.stringify(found.run)).not.toContain(SECRET);

    const missing = await routed({ output: 'response' }, 'nope');
    expect(missing.run.status, JSON.stringify(missing.run.error)).toBe('completed');
    expect(missing.run.output).toEqual({ result: 'missing (404)' });
    expect(missing.call.status).toBe('completed');
    // A 404 body that says JSON but is not is kept as text, not a failure.
    expect(JSON.parse(missing.call.output!)).toMatchObject({ status: 404, body: '<html>not found</html>' });
  });

  it('fails on a 404 with fail_on_status: true, and by default with output: body', async () => {
    const strict = await routed({ output: 'response', fail_on_status: true }, 'nope');
    expect(strict.run.error).toMatchObject({ code: 'http_status', node_id: 'call' });
    const plain = await routed({}, 'nope');
    expect(plain.run.error).toMatchObject({ code: 'http_status', node_id: 'call' });
  });

  it('still fails a connection failure with output: response', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.2', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const nodes = [
      { id: 'input', type: 'text_input', config: { variable: 'path' } },
      { id: 'call', type: 'http_request', config: { url: `http://127.0.0.2:${port}/x`, output: 'response' } },
      { id: 'result', type: 'text_output', config: { format: 'plain' } },
    ] as WorkflowNode[];
    const edges = [
      { from: 'input', to: 'call' },
      { from: 'call', to: 'result' },
    ];
    const run = await createAndRun(alice, { name: 'down', nodes, edges }, { path: 'x' });
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'http_error', node_id: 'call' });
  });
});
