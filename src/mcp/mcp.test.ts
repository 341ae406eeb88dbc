// The MCP server through a real HTTP server, store and queue with an in-process worker, driven by
// the official SDK's client (Client + StreamableHTTPClientTransport) with an OAuth access token
// obtained through the authorization-code flow: what an AI assistant does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oauth from 'oauth4webapi';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { type ApiClient, type Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { dpopBoundRefresh, dpopKey, dpopProof, type DpopKey } from '../../test/support/dpopProof.ts';
import { createFixture, discover, insecure, obtainTokens, type Fixture } from '../../test/support/oauthFlow.ts';
import { createWorkflowTool, workflowsClientOf } from '../../test/support/workflowUsers.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];

/** text_input `ticket` -> llm_call (the fake upper-cases it) -> text_output `result`. */
const SHOUT: WorkflowCreate = {
  name: 'Shout',
  description: 'Answers the ticket in capitals.',
  nodes: [
    { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'shout', type: 'llm_call', config: { model: 'gpt-4o-mini' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'input', to: 'shout' },
    { from: 'shout', to: 'result' },
  ],
};

describe.each(testDialects())('MCP server at /mcp (%s)', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let alice: Fixture;
  let aliceApi: ApiClient;
  let aliceToken: string;
  let exposed: string;
  let hidden: string;
  let bobs: string;
  const clients: Client[] = [];

  const apiOf = (f: { userId: number; login: string }) => workflowsClientOf(server.ctx, server.baseUrl, f);

  const create = createWorkflowTool;

  /** A token issued for this MCP server (RFC 8707 `resource`, as the MCP specification has clients send), unless `resource` says otherwise. */
  async function tokenOf(
    f: Fixture,
    scope: string,
    resource: string | null = `${server.baseUrl}/mcp`,
  ): Promise<oauth.TokenEndpointResponse> {
    const as = await discover(server.baseUrl);
    return (await obtainTokens(server.baseUrl, as, f, scope, resource === null ? {} : { resource })).tokens;
  }

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'tests', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', server.baseUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  /** The workflow's newest run, once it has ended (the API's Prefer: wait). */
  async function lastRunEnded(api: ApiClient, workflowId: string): Promise<Schemas['RunDetail']> {
    const list = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } });
    const runId = list.data!.data[0]!.id;
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: runId }, header: { Prefer: 'wait=30' } },
    });
    return data!.data;
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'gpt-4o-mini',
        // Priced, so that a run costs and a monthly budget can be spent.
        MODEL_PRICES: JSON.stringify({ 'gpt-4o-mini': { input: 1000, output: 1000, currency: 'USD' } }),
        // One run of a user at a time: a second call while one goes on meets the quota.
        USER_MAX_CONCURRENT_RUNS: '1',
      },
    });
    alice = await createFixture(server.ctx.db);
    const bob = await createFixture(server.ctx.db);
    aliceApi = await apiOf(alice);
    exposed = await create(aliceApi, SHOUT, true);
    hidden = await create(aliceApi, { ...SHOUT, name: 'Not a tool' }, false);
    bobs = await create(await apiOf(bob), { ...SHOUT, name: "Bob's tool" }, true);
    aliceToken = (await tokenOf(alice, 'workflows:run')).access_token;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await server?.close();
    await fake?.close();
  });

  it("lists the user's own workflows marked as tools only, with their input and output schemas", async () => {
    const mcp = await connect(aliceToken);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([exposed]);
    expect(tools.map((t) => t.name)).not.toContain(hidden);
    expect(tools.map((t) => t.name)).not.toContain(bobs);
    expect(tools[0]).toMatchObject({
      title: 'Shout',
      description: 'Answers the ticket in capitals.',
      inputSchema: {
        type: 'object',
        properties: { ticket: { type: 'string' } },
        required: ['ticket'],
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { result: { type: 'string' } } },
    });
  });

  it('calls a tool: a run of the workflow, its output as structured content, with progress notifications', async () => {
    const mcp = await connect(aliceToken);
    const progress: Progress[] = [];
    const result = (await mcp.callTool({ name: exposed, arguments: { ticket: 'export is broken' } }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ result: 'EXPORT IS BROKEN' });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify({ result: 'EXPORT IS BROKEN' }) }]);
    expect(progress.map((p) => p.message)).toEqual(
      expect.arrayContaining(['run running', 'node.started shout', 'node.finished shout (completed)']),
    );
    const steps = progress.map((p) => p.progress);
    expect(steps).toEqual([...steps].sort((a, b) => a - b)); // increasing, as MCP asks
    const run = await lastRunEnded(aliceApi, exposed);
    expect(run).toMatchObject({ status: 'completed', inputs: { ticket: 'export is broken' } });
  });

  it("answers a repeated _meta.idempotency_key with the same run, as the API's Idempotency-Key", async () => {
    const mcp = await connect(aliceToken);
    const call = () =>
      mcp.callTool({ name: exposed, arguments: { ticket: 'once' }, _meta: { idempotency_key: 'mcp-once-1' } });
    const first = (await call()) as CallToolResult;
    const again = (await call()) as CallToolResult;
    expect(first.structuredContent).toEqual({ result: 'ONCE' });
    expect(again.structuredContent).toEqual({ result: 'ONCE' });
    expect(again._meta?.run_id).toBe(first._meta?.run_id);
  });

  it("refuses another user's tool and an unmarked workflow as unknown tools, and runs neither", async () => {
    const mcp = await connect(aliceToken);
    for (const name of [bobs, hidden, 'wf_nonexistent'])
      await expect(mcp.callTool({ name, arguments: { ticket: 'x' } })).rejects.toThrow(/Unknown tool/);
    const runs = await aliceApi.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: hidden } } });
    expect(runs.data!.data).toEqual([]);
  });

  it("answers invalid arguments with a tool error in the API's words", async () => {
    const mcp = await connect(aliceToken);
    const wrong = (await mcp.callTool({ name: exposed, arguments: { ticket: 5 } })) as CallToolResult;
    expect(wrong.isError).toBe(true);
    expect(JSON.stringify(wrong.content)).toMatch(/ticket must be a string/);
    const extra = (await mcp.callTool({ name: exposed, arguments: { ticket: 'a', other: 1 } })) as CallToolResult;
    expect(JSON.stringify(extra.content)).toMatch(/other is not a text_input variable/);
    const missing = (await mcp.callTool({ name: exposed, arguments: {} })) as CallToolResult;
    expect(JSON.stringify(missing.content)).toMatch(/ticket is required/);
  });

  it("cancels the run when the client cancels the call; a call meanwhile meets the user's run quota as a tool error", async () => {
    const mcp = await connect(aliceToken);
    fake.replies.push({ kind: 'hang' });
    const asked = fake.requests.length;
    const abort = new AbortController();
    const call = mcp.callTool({ name: exposed, arguments: { ticket: 'slow' } }, undefined, { signal: abort.signal });
    const settled = call.then(
      () => 'answered',
      (err: unknown) => (err as Error).name,
    );
    // The run is at its model call: the fake has the request and holds it.
    await expect.poll(() => fake.requests.length, { timeout: 30_000 }).toBeGreaterThan(asked);

    const second = (await mcp.callTool({ name: exposed, arguments: { ticket: 'more' } })) as CallToolResult;
    expect(second.isError).toBe(true);
    expect(JSON.stringify(second.content)).toMatch(/At most 1 runs may be queued or running at once per user/);

    abort.abort('the user stopped it');
    expect(await settled).not.toBe('answered');
    const run = await lastRunEnded(aliceApi, exposed);
    expect(run).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  });

  it('cancels the run when the client goes away before the call has answered', async () => {
    fake.replies.push({ kind: 'hang' });
    const asked = fake.requests.length;
    const leave = new AbortController();
    const answer = fetch(new URL('/mcp', server.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${aliceToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: exposed, arguments: { ticket: 'left' } },
      }),
      signal: leave.signal,
    }).then((res) => res.text());
    await expect.poll(() => fake.requests.length, { timeout: 30_000 }).toBeGreaterThan(asked);
    leave.abort();
    await expect(answer).rejects.toThrow();
    const run = await lastRunEnded(aliceApi, exposed);
    expect(run).toMatchObject({ status: 'cancelled', inputs: { ticket: 'left' } });
  });

  it("refuses a call once the workflow's monthly budget is spent, as a tool error in the API's words", async () => {
    const capped = await create(aliceApi, { ...SHOUT, name: 'Capped' }, true);
    const budget = await aliceApi.PUT('/api/workflows/{workflow_id}/budget', {
      params: { path: { workflow_id: capped } },
      body: { monthly_limit: 0.000001 },
    });
    expect(budget.response.status).toBe(200);
    const mcp = await connect(aliceToken);
    const first = (await mcp.callTool({ name: capped, arguments: { ticket: 'spend it' } })) as CallToolResult;
    expect(first.structuredContent).toEqual({ result: 'SPEND IT' }); // a run already going finishes
    const refused = (await mcp.callTool({ name: capped, arguments: { ticket: 'more' } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/The monthly budget of .* is spent/);
    const runs = await aliceApi.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: capped } } });
    expect(runs.data!.data).toHaveLength(1);
  });

  it('answers 401 with a Bearer challenge without a token or with a bad one, and 403 without the scope', async () => {
    const post = (authorization?: string) =>
      fetch(new URL('/mcp', server.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    // Every challenge names this resource's metadata (RFC 9728 5.1), where a client finds its authorization server.
    const metadata = `resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource/mcp"`;
    const none = await post();
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect(none.headers.get('www-authenticate')).toContain(metadata);
    // ... and the scope a token needs here, which a client asks for when it signs in (RFC 6750 3).
    expect(none.headers.get('www-authenticate')).toContain('scope="workflows:run"');
    const bad = await post('Bearer gho_not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    expect(bad.headers.get('www-authenticate')).toContain(metadata);
    const apiKey = await post('Bearer sk_not-an-oauth-token');
    expect(apiKey.status).toBe(401);

    const profileOnly = (await tokenOf(alice, 'user_info')).access_token;
    const narrow = await post(`Bearer ${profileOnly}`);
    expect(narrow.status).toBe(403);
    expect(narrow.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="workflows:run"/);
    expect(narrow.headers.get('www-authenticate')).toContain(metadata);
    expect(await narrow.json()).toMatchObject({ code: 'insufficient_scope' });

    const get = await fetch(new URL('/mcp', server.baseUrl), { headers: { authorization: `Bearer ${aliceToken}` } });
    expect(get.status).toBe(405);
  });

  it('answers malformed requests as the transport specifies, never with a 500', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(new URL('/mcp', server.baseUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${aliceToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      }).then((res) => res.status);
    expect(await post('{not json')).toBe(400);
    // Neither is a JSON-RPC request: the SDK's transport answers them; nothing runs, nothing fails.
    for (const body of ['{}', '[]', '"text"', '{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}'])
      expect(await post(body), body).toBeLessThan(500);
    expect(await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { accept: 'text/html' })).toBe(
      406,
    );
    expect(await post('x', { 'content-type': 'text/plain' })).toBe(415);
    const unknownMethod = await fetch(new URL('/mcp', server.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${aliceToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'no/such' }),
    });
    expect(unknownMethod.status).toBe(200);
    expect(await unknownMethod.text()).toMatch(/-32601/); // JSON-RPC's method not found
  });

  describe('a DPoP-bound token', () => {
    let key: DpopKey;
    let bound: string;
    beforeAll(async () => {
      key = await dpopKey();
      const refresh = (await tokenOf(alice, 'workflows:run')).refresh_token!;
      const tokens = await dpopBoundRefresh(server.baseUrl, alice, refresh, key);
      expect(tokens.token_type).toBe('DPoP');
      bound = tokens.access_token;
    });

    const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const post = (headers: Record<string, string>) =>
      fetch(new URL('/mcp', server.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: listBody,
      });
    const mcpUrl = () => `${server.baseUrl}/mcp`;

    it('works through the SDK with Authorization: DPoP and a fresh proof on every request', async () => {
      const client = new Client({ name: 'tests', version: '1.0.0' });
      let proofs = 0;
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', server.baseUrl), {
        fetch: async (url, init) => {
          const headers = new Headers(init?.headers);
          const method = init?.method ?? 'GET';
          headers.set('authorization', `DPoP ${bound}`);
          headers.set('dpop', await dpopProof(key, { htm: method, htu: mcpUrl(), accessToken: bound }));
          proofs++;
          return fetch(url, { ...init, headers });
        },
      });
      await client.connect(transport);
      clients.push(client);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain(exposed);
      const result = (await client.callTool({ name: exposed, arguments: { ticket: 'bound' } })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toEqual({ result: 'BOUND' });
      expect(proofs).toBeGreaterThanOrEqual(3);
    });

    it('refuses it as Bearer, without a proof, or with a bad, replayed or foreign proof, with a DPoP challenge', async () => {
      const challenge =
        /^DPoP error="invalid_token", .*algs="ES256 EdDSA RS256 PS256", resource_metadata="[^"]+\/.well-known\/oauth-protected-resource\/mcp", scope="workflows:run"$/;
      const asBearer = await post({
        authorization: `Bearer ${bound}`,
        dpop: await dpopProof(key, { htm: 'POST', htu: mcpUrl(), accessToken: bound }),
      });
      expect(asBearer.status).toBe(401);
      expect(asBearer.headers.get('www-authenticate')).toMatch(challenge);
      expect(await asBearer.json()).toMatchObject({ code: 'invalid_access_token' });

      const noProof = await post({ authorization: `DPoP ${bound}` });
      expect(noProof.status).toBe(401);
      expect(noProof.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
      expect(await noProof.json()).toMatchObject({ code: 'invalid_dpop_proof' });

      const wrongUrl = await post({
        authorization: `DPoP ${bound}`,
        dpop: await dpopProof(key, {
          htm: 'POST',
          htu: `${server.baseUrl}/api/open/oauth/userinfo`,
          accessToken: bound,
        }),
      });
      expect(wrongUrl.status).toBe(401);
      expect(await wrongUrl.json()).toMatchObject({ code: 'invalid_dpop_proof' });

      const noAth = await post({
        authorization: `DPoP ${bound}`,
        dpop: await dpopProof(key, { htm: 'POST', htu: mcpUrl() }),
      });
      expect(noAth.status).toBe(401);
      expect(await noAth.json()).toMatchObject({ code: 'invalid_dpop_proof' });

      const proof = await dpopProof(key, { htm: 'POST', htu: mcpUrl(), accessToken: bound });
      expect((await post({ authorization: `DPoP ${bound}`, dpop: proof })).status).toBe(200);
      const replayed = await post({ authorization: `DPoP ${bound}`, dpop: proof });
      expect(replayed.status).toBe(401);
      expect(await replayed.json()).toMatchObject({ code: 'invalid_dpop_proof' });

      const thief = await dpopKey();
      const foreign = await post({
        authorization: `DPoP ${bound}`,
        dpop: await dpopProof(thief, { htm: 'POST', htu: mcpUrl(), accessToken: bound }),
      });
      expect(foreign.status).toBe(401);
      expect(foreign.headers.get('www-authenticate')).toMatch(challenge);
    });

    it('leaves an unbound token as it was: Bearer works, and DPoP with a valid proof too', async () => {
      expect((await post({ authorization: `Bearer ${aliceToken}` })).status).toBe(200);
      const asDpop = await post({
        authorization: `DPoP ${aliceToken}`,
        dpop: await dpopProof(key, { htm: 'POST', htu: mcpUrl(), accessToken: aliceToken }),
      });
      expect(asDpop.status).toBe(200);
    });
  });

  it('takes only tokens issued for it (RFC 8707), which the APIs refuse in turn', async () => {
    const post = (token: string) =>
      fetch(new URL('/mcp', server.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    // Issued without `resource`: the MCP server refuses it, with the challenge that leads to its metadata.
    const anywhere = (await tokenOf(alice, 'workflows:run workflows:read user_info', null)).access_token;
    const refused = await post(anywhere);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    expect(refused.headers.get('www-authenticate')).toMatch(/the token was issued for another resource/);
    expect(refused.headers.get('www-authenticate')).toContain(
      `resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(await refused.json()).toMatchObject({ code: 'invalid_access_token' });
    // ... while the APIs take it, as they take every token of clients that never send `resource`.
    const bearer = { headers: { authorization: `Bearer ${anywhere}` } };
    expect((await fetch(`${server.baseUrl}/api/open/v1/userinfo`, bearer)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/api/workflows`, bearer)).status).toBe(200);

    // Issued for /mcp: taken here, refused at the open API and the workflows API.
    const forMcp = (await tokenOf(alice, 'workflows:run workflows:read user_info')).access_token;
    expect((await post(forMcp)).status).toBe(200);
    for (const path of ['/api/open/v1/userinfo', '/api/workflows']) {
      const elsewhere = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${forMcp}` } });
      expect(elsewhere.status, path).toBe(401);
      const challenge = elsewhere.headers.get('www-authenticate');
      expect(challenge, path).toMatch(/error="invalid_token".*the token was issued for another resource/);
      const resource = path.startsWith('/api/open') ? '/api/open' : '/api/workflows';
      expect(challenge, path).toContain(
        `resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource${resource}"`,
      );
    }
  });

  it('refuses a revoked token on the next request', async () => {
    const tokens = await tokenOf(alice, 'workflows:run');
    const mcp = await connect(tokens.access_token);
    expect((await mcp.listTools()).tools.map((t) => t.name)).toContain(exposed);
    const as = await discover(server.baseUrl);
    const revoked = await oauth.revocationRequest(
      as,
      { client_id: alice.clientId },
      oauth.ClientSecretBasic(alice.clientSecret),
      tokens.access_token,
      insecure,
    );
    expect(revoked.status).toBe(200);
    await expect(mcp.listTools()).rejects.toThrow(/401/);
  });
});
