// The MCP server as a real MCP client meets it: the official SDK's Client with its OAuth client
// provider (test/support/mcpOAuthClient.ts) finds the authorization server from /mcp's 401, sends
// the user through our login and consent pages in headless Chromium (PKCE code flow), lists and
// calls tools, follows a run's progress, cancels a call, and refreshes an expired access token on
// its own. Nothing waits on a clock: each step waits for an answer, a page or a request.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { type ApiClient, type Schemas } from '../../client/src/index.ts';
import { hashToken } from '../shared/crypto.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { launchChromium } from '../../test/support/chromium.ts';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import {
  ChromiumOAuthProvider,
  connectWithOAuth,
  MCP_REDIRECT_URI,
  createMcpUser,
  type McpUser,
} from '../../test/support/mcpOAuthClient.ts';
import { createFixture, discover } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { findClientByClientId } from '../oauth/clients.ts';
import { createWorkflowTool, workflowsClientOf } from '../../test/support/workflowUsers.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];

/** text_input `ticket` -> the built-in echo model -> text_output `result`: no provider needed. */
const ECHO: WorkflowCreate = { name: 'Echo', description: 'Answers with the ticket.', ...seedGraph('echo') };
/** The same through the fake provider, which a test holds at its model call (a run that waits). */
const SLOW: WorkflowCreate = { name: 'Slow', ...seedGraph('gpt-4o-mini') };

describe.each(testDialects())('the MCP SDK client with OAuth against /mcp (%s)', (dialect) => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let user: McpUser;
  let api: ApiClient;
  let provider: ChromiumOAuthProvider;
  let mcp: Client;
  let tokenPath: string;
  const ids = { echo: '', slow: '', hidden: '', bobs: '' };

  const apiOf = (f: { userId: number; login: string }) => workflowsClientOf(server.ctx, server.baseUrl, f);

  const create = createWorkflowTool;

  /** The workflow's newest run, once it has ended (the API's Prefer: wait). */
  async function lastRunEnded(workflowId: string): Promise<Schemas['RunDetail']> {
    const list = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: workflowId } } });
    const runId = list.data!.data[0]!.id;
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: runId }, header: { Prefer: 'wait=30' } },
    });
    return data!.data;
  }

  /** Expires the access token in the store, the only honest way: revoking it would end the whole grant here. */
  async function expire(accessToken: string): Promise<void> {
    await server.ctx
      .db('oauth_tokens')
      .where({ access_token_hash: hashToken(accessToken) })
      .update({ access_expires_at: Date.now() - 1 });
    await revocationLease.settle(); // no process honours a lease of it any more
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'gpt-4o-mini',
        // MCP clients register themselves (RFC 7591); the operator allows it.
        CLIENT_REGISTRATION: 'open',
      },
    });
    user = await createMcpUser(server);
    api = await apiOf(user);
    ids.echo = await create(api, ECHO, true);
    ids.slow = await create(api, SLOW, true);
    ids.hidden = await create(api, { ...ECHO, name: 'Not a tool' }, false);
    const bob = await createFixture(server.ctx.db);
    ids.bobs = await create(await apiOf(bob), { ...ECHO, name: "Bob's tool" }, true);
    browser = await launchChromium();
    page = await browser.newPage();
    tokenPath = new URL((await discover(server.baseUrl)).token_endpoint!).pathname;
    provider = new ChromiumOAuthProvider(page, user);
    mcp = await connectWithOAuth(new URL('/mcp', server.baseUrl), provider);
  });
  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  it('signs in as the SDK does: discovery from the 401, dynamic registration, PKCE code flow through our pages, a refresh token', async () => {
    // The SDK registered itself (RFC 7591) as a public client: a client id, no secret.
    const registered = provider.clientInformation()!;
    expect(registered.client_id).toMatch(/\S/);
    expect(registered).not.toHaveProperty('client_secret');
    const stored = await findClientByClientId(server.ctx, registered.client_id);
    expect(stored).toMatchObject({ registrationKind: 'dynamic', tokenEndpointAuthMethod: 'none', ownerUserId: null });
    expect(provider.log.authorizations).toHaveLength(1);
    const url = provider.log.authorizations[0]!;
    // Found by the SDK's discovery, not configured: the service's own authorization endpoint.
    expect(url.origin).toBe(new URL(server.baseUrl).origin);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: MCP_REDIRECT_URI,
      code_challenge_method: 'S256',
      // The scope and the resource (RFC 8707) of /mcp's protected-resource metadata.
      scope: 'workflows:run',
      resource: `${server.baseUrl}/mcp`,
    });
    // The consent page told the user that nobody reviewed this client.
    expect(provider.log.consentPages).toHaveLength(1);
    expect(provider.log.consentPages[0]).toContain('Registered by itself, not reviewed');
    expect(provider.log.consentPages[0]).toContain(registered.client_id);
    // The SDK's own way there: refused without a token, the resource's metadata named by the 401
    // (RFC 9728), the authorization server's (RFC 8414), its registration, then the code's exchange.
    const seen = provider.log.exchanges.map(
      (x) => `${x.method} ${x.path} ${x.status}${x.authorized ? ' authorized' : ''}`,
    );
    const order = [
      'POST /mcp 401',
      'GET /.well-known/oauth-protected-resource/mcp 200',
      'GET /.well-known/oauth-authorization-server 200',
      'POST /api/open/oauth/register 201',
      `POST ${tokenPath} 200`,
      'POST /mcp 200 authorized',
    ];
    const at = order.map((step) => seen.indexOf(step));
    expect(at, seen.join('\n')).not.toContain(-1);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(provider.log.tokens).toHaveLength(1);
    expect(provider.log.tokens[0]).toMatchObject({ token_type: 'Bearer', scope: 'workflows:run' });
    expect(provider.log.tokens[0]!.refresh_token).toBeTruthy();
  });

  it("lists exactly the user's exposed workflows: not an unexposed one, not another user's", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([ids.echo, ids.slow].sort());
    expect(tools.find((t) => t.name === ids.echo)).toMatchObject({
      title: 'Echo',
      description: 'Answers with the ticket.',
      inputSchema: { type: 'object', properties: { ticket: { type: 'string' } }, required: ['ticket'] },
      outputSchema: { type: 'object', properties: { result: { type: 'string' } } },
    });
  });

  it('calls a tool: its run, the output as structured content, progress notifications as it goes', async () => {
    const progress: Progress[] = [];
    const result = (await mcp.callTool({ name: ids.echo, arguments: { ticket: 'export is broken' } }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as CallToolResult;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({ result: 'export is broken' });
    expect(progress.map((p) => p.message)).toEqual(
      expect.arrayContaining(['run running', 'node.started summarise', 'node.finished summarise (completed)']),
    );
    const run = await lastRunEnded(ids.echo);
    expect(run).toMatchObject({
      id: result._meta?.run_id,
      status: 'completed',
      inputs: { ticket: 'export is broken' },
    });
  });

  it('cancels the run when the client aborts a call that is under way', async () => {
    fake.replies.push({ kind: 'hang' });
    const asked = fake.requests.length;
    const abort = new AbortController();
    const progress: Progress[] = [];
    const call = mcp.callTool({ name: ids.slow, arguments: { ticket: 'slow' } }, undefined, {
      signal: abort.signal,
      onprogress: (p) => progress.push(p),
    });
    const settled = call.then(
      () => 'answered',
      (err: unknown) => String(err),
    );
    // The run is at its model call: the fake holds the request, and the client heard the node start.
    await expect.poll(() => fake.requests.length, { timeout: 30_000 }).toBeGreaterThan(asked);
    await expect.poll(() => progress.map((p) => p.message), { timeout: 30_000 }).toContain('node.started summarise');
    const from = provider.log.exchanges.length;
    abort.abort('the user stopped it');
    expect(await settled).toMatch(/AbortError|the user stopped it/);
    // The SDK told the server (notifications/cancelled, accepted with 202) and the server cancelled the run.
    await expect
      .poll(() => provider.log.exchanges.slice(from), { timeout: 30_000 })
      .toContainEqual({ method: 'POST', path: '/mcp', status: 202, authorized: true });
    const run = await lastRunEnded(ids.slow);
    expect(run).toMatchObject({ status: 'cancelled', inputs: { ticket: 'slow' } });
  });

  it('refreshes an expired access token on its own and goes on, without asking the user again', async () => {
    const before = provider.tokens()!;
    const from = provider.log.exchanges.length;
    await expire(before.access_token);
    const refused = await fetch(new URL('/mcp', server.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${before.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);

    const result = (await mcp.callTool({ name: ids.echo, arguments: { ticket: 'after refresh' } })) as CallToolResult;
    expect(result.structuredContent).toEqual({ result: 'after refresh' });
    expect(provider.log.tokens).toHaveLength(2);
    const after = provider.tokens()!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token); // rotated
    expect(provider.log.authorizations).toHaveLength(1); // no second trip through the browser
    // Refused with the old token, refreshed at the token endpoint, answered with the new one.
    // (POSTs only: the transport's optional GET stream, a 405 here, may come at any time.)
    const seen = provider.log.exchanges.slice(from).filter((x) => x.method === 'POST');
    expect(seen[0]).toEqual({ method: 'POST', path: '/mcp', status: 401, authorized: true });
    // A public client names itself in the form: no Authorization header at the token endpoint.
    expect(seen).toContainEqual({ method: 'POST', path: tokenPath, status: 200, authorized: false });
    expect(seen.at(-1)).toEqual({ method: 'POST', path: '/mcp', status: 200, authorized: true });
  });

  it('cancels the run of a call whose access token expired meanwhile: the cancellation comes with the refreshed one', async () => {
    fake.replies.push({ kind: 'hang' });
    const asked = fake.requests.length;
    const abort = new AbortController();
    const call = mcp.callTool({ name: ids.slow, arguments: { ticket: 'outlived its token' } }, undefined, {
      signal: abort.signal,
    });
    const settled = call.then(
      () => 'answered',
      (err: unknown) => String(err),
    );
    await expect.poll(() => fake.requests.length, { timeout: 30_000 }).toBeGreaterThan(asked);
    const refreshes = provider.log.tokens.length;
    await expire(provider.tokens()!.access_token);
    abort.abort('the user stopped it');
    expect(await settled).toMatch(/AbortError|the user stopped it/);
    await expect.poll(() => provider.log.tokens.length, { timeout: 30_000 }).toBe(refreshes + 1);
    const run = await lastRunEnded(ids.slow);
    expect(run).toMatchObject({ status: 'cancelled', inputs: { ticket: 'outlived its token' } });
  });
});
