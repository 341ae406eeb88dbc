// The workflow endpoints through a real HTTP server and a real database (embedded PostgreSQL;
// MySQL too when TEST_MYSQL_URL is set), called with the typed client integrators use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { startTestServer } from '../../test/support/server.ts';
import { testDialects } from '../../test/support/db.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken, deleteAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

type WorkflowNode = Schemas['WorkflowNode'];

// Fixtures through the same platform services the admin CLI uses.
async function createUserFixture(ctx: AppContext, login: string): Promise<number> {
  return (await createUser(ctx, { login, password: 'correct horse battery' })).id;
}

async function createApiKeyFixture(
  ctx: AppContext,
  userId: number,
  namespace: string,
  permissions: string[],
): Promise<string> {
  const { token } = await createAccessToken(ctx, {
    userId,
    namespace,
    name: `key ${permissions.join(',') || 'none'}`,
    usageScenario: 'paid',
    permissions,
  });
  return token;
}

const { nodes, edges } = seedGraph();

describe.each(testDialects())('workflow endpoints on %s', (dialect) => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let alice: ApiClient;
  let bob: ApiClient;
  let aliceKey: string;
  let noPermissionKey: string;

  /** A raw request, for what the typed client cannot send (bad JSON, oversized bodies). */
  const raw = (path: string, init: RequestInit & { bearer?: string } = {}) =>
    fetch(server.baseUrl + path, {
      ...init,
      headers: {
        ...(init.bearer ? { Authorization: `Bearer ${init.bearer}` } : {}),
        ...(init.body ? { 'Content-Type': 'application/json' } : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
    });

  beforeAll(async () => {
    server = await startTestServer({ dialect, env: { BODY_LIMIT_BYTES: '65536', WORKFLOW_MAX_TOKENS_LIMIT: '4096' } });
    const aliceId = await createUserFixture(server.ctx, 'alice');
    const bobId = await createUserFixture(server.ctx, 'bob');
    aliceKey = await createApiKeyFixture(server.ctx, aliceId, 'alice', ['workflows']);
    noPermissionKey = await createApiKeyFixture(server.ctx, aliceId, 'alice', []);
    alice = createApiClient(server.baseUrl, { bearer: aliceKey });
    bob = createApiClient(server.baseUrl, {
      bearer: await createApiKeyFixture(server.ctx, bobId, 'bob', ['workflows']),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function create(name: string, client = alice) {
    const { data, error } = await client.POST('/api/workflows', { body: { name, nodes, edges } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data;
  }

  describe('authentication (RFC 6750)', () => {
    it('answers 401 with a WWW-Authenticate challenge when no API key is sent', async () => {
      const { response, error } = await createApiClient(server.baseUrl).GET('/api/workflows');
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="api"/);
      expect(error).toMatchObject({ status: 401, title: 'Unauthorized' });
    });

    it('answers 401 invalid_token for an unknown API key', async () => {
      const { response } = await createApiClient(server.baseUrl, { bearer: 'sk_' + 'A'.repeat(43) }).GET(
        '/api/workflows',
      );
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });

    it('answers 401 for a bearer token that is not an API key at all', async () => {
      const { response } = await createApiClient(server.baseUrl, { bearer: 'gho_notanapikey' }).POST('/api/workflows', {
        body: { name: 'x' },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    });

    it('answers 401 for an API key that was deleted', async () => {
      const user = await createUser(server.ctx, { login: 'erin', password: 'correct horse battery' });
      const { token, record } = await createAccessToken(server.ctx, {
        userId: user.id,
        namespace: 'erin',
        name: 'temp',
        usageScenario: 'trial',
        permissions: ['workflows'],
      });
      const erin = createApiClient(server.baseUrl, { bearer: token });
      expect((await erin.GET('/api/workflows')).response.status).toBe(200);
      await deleteAccessToken(server.ctx, user.id, record.id);
      const { response } = await erin.GET('/api/workflows');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });

    it('answers 403 for an API key without the workflows permission', async () => {
      const { response, error } = await createApiClient(server.baseUrl, { bearer: noPermissionKey }).GET(
        '/api/workflows',
      );
      expect(response.status).toBe(403);
      expect(error?.detail).toBe('This API key does not have the workflows permission.');
    });
  });

  describe('create, read, update, delete', () => {
    it('creates a workflow: 201 with Location, ETag and the stored workflow', async () => {
      const { data, response } = await alice.POST('/api/workflows', {
        body: { name: 'Ticket summariser', description: 'Summarises a ticket.', nodes, edges },
      });
      expect(response.status).toBe(201);
      const workflow = data!.data;
      expect(workflow).toMatchObject({
        name: 'Ticket summariser',
        description: 'Summarises a ticket.',
        nodes,
        edges,
        version: 1,
      });
      expect(workflow.id).toMatch(/^wf_[0-9A-Z]{26}$/);
      expect(workflow.created_at).toBe(workflow.updated_at);
      expect(response.headers.get('location')).toBe(`/api/workflows/${workflow.id}`);
      expect(response.headers.get('etag')).toBe('"1"');
    });

    it('stores nodes exactly as sent: optional llm_call settings are not filled in', async () => {
      const sparse: WorkflowNode[] = [
        nodes[0]!,
        { id: 'summarise', type: 'llm_call', config: { model: 'echo' } },
        nodes[2]!,
      ];
      const { data, response } = await alice.POST('/api/workflows', { body: { name: 'Sparse', nodes: sparse, edges } });
      expect(response.status).toBe(201);
      expect(data!.data.nodes).toEqual(sparse);
    });

    it('refuses a workflow from a name alone (422): a graph without nodes could never run', async () => {
      const { error, response } = await alice.POST('/api/workflows', { body: { name: 'Draft' } });
      expect(response.status).toBe(422);
      expect(error?.errors).toEqual([{ pointer: '/nodes', message: expect.stringMatching(/at least one node/) }]);
    });

    it('reads a workflow with its ETag', async () => {
      const created = await create('Readable');
      const { data, response } = await alice.GET('/api/workflows/{workflow_id}', {
        params: { path: { workflow_id: created.id } },
      });
      expect(response.status).toBe(200);
      expect(data!.data).toEqual(created);
      expect(response.headers.get('etag')).toBe('"1"');
    });

    it('updates any field, bumping the version each time', async () => {
      const created = await create('Before');
      const path = { workflow_id: created.id };
      const renamed = await alice.PATCH('/api/workflows/{workflow_id}', {
        params: { path },
        body: { name: 'After', description: 'new' },
      });
      expect(renamed.response.status).toBe(200);
      expect(renamed.data!.data).toMatchObject({ name: 'After', description: 'new', nodes, edges, version: 2 });
      expect(renamed.response.headers.get('etag')).toBe('"2"');

      const rewired = await alice.PATCH('/api/workflows/{workflow_id}', {
        params: { path, header: { 'If-Match': '"2"' } },
        body: { nodes: [nodes[0]!, nodes[2]!], edges: [{ from: 'input', to: 'result' }] },
      });
      expect(rewired.response.status).toBe(200);
      expect(rewired.data!.data).toMatchObject({ version: 3, edges: [{ from: 'input', to: 'result' }] });
      expect(Date.parse(rewired.data!.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    });

    it('refuses an update with a stale If-Match (412, RFC 9110 13.1.1), by ETag or bare version, with the current ETag', async () => {
      const created = await create('Stale');
      const path = { workflow_id: created.id };
      await alice.PATCH('/api/workflows/{workflow_id}', { params: { path }, body: { name: 'v2' } });
      for (const ifMatch of ['"1"', '1']) {
        const { response, error } = await alice.PATCH('/api/workflows/{workflow_id}', {
          params: { path, header: { 'If-Match': ifMatch } },
          body: { name: 'v3' },
        });
        expect(response.status).toBe(412);
        expect(response.headers.get('etag')).toBe('"2"');
        expect(error?.detail).toBe('The workflow is at version 2, not 1.');
      }
    });

    it('lets one of two concurrent updates from the same version win; the other gets 412', async () => {
      const created = await create('Contested');
      const patch = (name: string) =>
        alice.PATCH('/api/workflows/{workflow_id}', {
          params: { path: { workflow_id: created.id }, header: { 'If-Match': '"1"' } },
          body: { name },
        });
      const results = await Promise.all([patch('first'), patch('second')]);
      expect(results.map((r) => r.response.status).sort()).toEqual([200, 412]);
      const winner = results.find((r) => r.response.status === 200)!.data!.data;
      const { data } = await alice.GET('/api/workflows/{workflow_id}', {
        params: { path: { workflow_id: created.id } },
      });
      expect(data!.data).toMatchObject({ name: winner.name, version: 2 });
    });

    it('deletes a workflow (204); afterwards it is 404 for read, update and delete', async () => {
      const created = await create('Doomed');
      const path = { workflow_id: created.id };
      const deleted = await alice.DELETE('/api/workflows/{workflow_id}', { params: { path } });
      expect(deleted.response.status).toBe(204);
      expect((await alice.GET('/api/workflows/{workflow_id}', { params: { path } })).response.status).toBe(404);
      expect(
        (await alice.PATCH('/api/workflows/{workflow_id}', { params: { path }, body: { name: 'x' } })).response.status,
      ).toBe(404);
      const again = await alice.DELETE('/api/workflows/{workflow_id}', { params: { path } });
      expect(again.response.status).toBe(404);
      expect(again.error).toMatchObject({ status: 404, detail: `No workflow ${created.id}.` });
    });

    it('deletes with If-Match only the version it names: a stale one is 412 with the current ETag and deletes nothing', async () => {
      const created = await create('Guarded');
      const path = { workflow_id: created.id };
      await alice.PATCH('/api/workflows/{workflow_id}', { params: { path }, body: { name: 'Guarded v2' } });
      const stale = await alice.DELETE('/api/workflows/{workflow_id}', {
        params: { path, header: { 'If-Match': '"1"' } },
      });
      expect(stale.response.status).toBe(412);
      expect(stale.response.headers.get('etag')).toBe('"2"');
      expect((await alice.GET('/api/workflows/{workflow_id}', { params: { path } })).response.status).toBe(200);
      const current = await alice.DELETE('/api/workflows/{workflow_id}', {
        params: { path, header: { 'If-Match': '2' } },
      });
      expect(current.response.status).toBe(204);
      const gone = await alice.DELETE('/api/workflows/{workflow_id}', {
        params: { path, header: { 'If-Match': '"2"' } },
      });
      expect(gone.response.status).toBe(404);
    });

    it('compares ids exactly: the id in another case is 404 on every dialect (MySQL default collations fold case)', async () => {
      const created = await create('Case of the id');
      const swapped = created.id.replace(/[a-z]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
      for (const workflowId of [created.id.toUpperCase(), created.id.toLowerCase(), swapped]) {
        const { response } = await alice.GET('/api/workflows/{workflow_id}', {
          params: { path: { workflow_id: workflowId } },
        });
        expect(response.status, workflowId).toBe(404);
      }
      expect(
        (await alice.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: created.id } } })).response
          .status,
      ).toBe(200);
    });

    it('answers 404 for an id that never existed', async () => {
      const { response } = await alice.GET('/api/workflows/{workflow_id}', {
        params: { path: { workflow_id: 'wf_00000000000000000000000000' } },
      });
      expect(response.status).toBe(404);
    });
  });

  describe('isolation between users', () => {
    it("treats another user's workflow as not found, for every operation", async () => {
      const mine = await create('Alice only');
      const path = { workflow_id: mine.id };
      expect((await bob.GET('/api/workflows/{workflow_id}', { params: { path } })).response.status).toBe(404);
      expect(
        (await bob.PATCH('/api/workflows/{workflow_id}', { params: { path }, body: { name: 'mine now' } })).response
          .status,
      ).toBe(404);
      expect((await bob.DELETE('/api/workflows/{workflow_id}', { params: { path } })).response.status).toBe(404);
      const { data } = await bob.GET('/api/workflows', { params: { query: { search: 'Alice only' } } });
      expect(data!.data).toEqual([]);
      expect((await alice.GET('/api/workflows/{workflow_id}', { params: { path } })).data!.data.name).toBe(
        'Alice only',
      );
    });
  });

  describe('graph validation (422 with every problem)', () => {
    const badGraph = {
      name: 'Broken',
      nodes: [
        { id: 'input', type: 'text_input', config: { variable: '9lives' } },
        { id: 'summarise', type: 'llm_call', config: { model: '', temperature: 3, max_tokens: 5000 } },
        { id: 'result', type: 'text_output', config: { format: 'html' } },
        { id: 'input', type: 'text_output', config: { format: 'plain' } },
        { id: 'mystery', type: 'http_call', config: {} },
      ],
      edges: [
        { from: 'input', to: 'summarise' },
        { from: 'summarise', to: 'nowhere' },
        { from: 'summarise', to: 'summarise' },
        { from: 'input', to: 'summarise' },
      ],
    };
    const expectedErrors = [
      { pointer: '/nodes/0/config/variable', message: expect.stringMatching(/identifier/) },
      { pointer: '/nodes/1/config/model', message: 'must not be empty' },
      { pointer: '/nodes/1/config/temperature', message: 'must be <= 2' },
      { pointer: '/nodes/1/config/max_tokens', message: 'must be <= 4096' },
      { pointer: '/nodes/2/config/format', message: 'must be one of plain, markdown, json' },
      { pointer: '/nodes/2', message: 'text_output "result" is not reachable from any text_input' },
      { pointer: '/nodes/3/id', message: 'duplicate node id "input" (also /nodes/0)' },
      {
        pointer: '/nodes/4/type',
        message: expect.stringMatching(
          /^unknown node type "http_call"; known: text_input, llm_call, template, condition, text_output(, [a-z_]+)+$/,
        ),
      },
      { pointer: '/edges/1', message: 'edge refers to unknown node "nowhere"' },
      { pointer: '/edges/2', message: 'edge connects node "summarise" to itself' },
      { pointer: '/edges/3', message: 'duplicate edge "input" -> "summarise" (also /edges/0)' },
    ];

    it('lists schema-level and semantic problems together in one 422 on create', async () => {
      const response = await raw('/api/workflows', {
        method: 'POST',
        bearer: aliceKey,
        body: JSON.stringify(badGraph),
      });
      expect(response.status).toBe(422);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({
        type: 'https://docs.openauth.dev/problems/invalid-workflow',
        title: 'Invalid workflow',
        status: 422,
        detail: `The workflow graph has ${expectedErrors.length} problems.`,
        errors: expectedErrors,
      });
    });

    it('lists semantic problems of a schema-valid graph (cycle, unreachable output) in one 422', async () => {
      const { response, error } = await alice.POST('/api/workflows', {
        body: {
          name: 'Loop',
          nodes: [...nodes, { id: 'orphan', type: 'text_output', config: { format: 'json' } }],
          edges: [...edges, { from: 'result', to: 'summarise' }],
        },
      });
      expect(response.status).toBe(422);
      expect(error?.errors).toEqual([
        { pointer: '/nodes/3', message: 'text_output "orphan" is not reachable from any text_input' },
        { pointer: '/edges/1', message: 'edges form a cycle through "summarise", "result"' },
        { pointer: '/edges/2', message: 'edge out of text_output "result": a text_output ends the graph' },
      ]);
    });

    it('validates an update whole: new nodes against the stored edges', async () => {
      const created = await create('Patch me');
      const response = await raw(`/api/workflows/${created.id}`, {
        method: 'PATCH',
        bearer: aliceKey,
        body: JSON.stringify({
          nodes: [nodes[0], { id: 'summarise', type: 'llm_call', config: { model: 'echo', temperature: -1 } }],
        }),
      });
      expect(response.status).toBe(422);
      expect((await response.json()).errors).toEqual([
        { pointer: '/nodes/1/config/temperature', message: 'must be >= 0' },
        { pointer: '/edges/1', message: 'edge refers to unknown node "result"' },
      ]);
      const { data } = await alice.GET('/api/workflows/{workflow_id}', {
        params: { path: { workflow_id: created.id } },
      });
      expect(data!.data.version).toBe(1);
    });

    it("lists problems of name and description in the same 422 as the graph's", async () => {
      const response = await raw('/api/workflows', {
        method: 'POST',
        bearer: aliceKey,
        body: JSON.stringify({ ...badGraph, name: '', description: 7 }),
      });
      expect(response.status).toBe(422);
      const { errors } = (await response.json()) as { errors: { pointer: string; message: string }[] };
      expect(errors.slice(0, 2)).toEqual([
        { pointer: '/name', message: 'must be 1 to 200 characters' },
        { pointer: '/description', message: 'must be a string' },
      ]);
      expect(errors.slice(2)).toEqual(expectedErrors);
    });

    it("lists a bad name with the graph's problems on update too; a bad name alone is a 422 of its own", async () => {
      const created = await create('Rename me');
      const both = await raw(`/api/workflows/${created.id}`, {
        method: 'PATCH',
        bearer: aliceKey,
        body: JSON.stringify({ name: '', nodes: [] }),
      });
      expect(both.status).toBe(422);
      expect(((await both.json()) as { errors: unknown[] }).errors).toEqual([
        { pointer: '/name', message: 'must be 1 to 200 characters' },
        { pointer: '/nodes', message: expect.stringMatching(/at least one node/) },
        { pointer: '/edges/0', message: 'edge refers to unknown node "input"' },
        { pointer: '/edges/0', message: 'edge refers to unknown node "summarise"' },
        { pointer: '/edges/1', message: 'edge refers to unknown node "summarise"' },
        { pointer: '/edges/1', message: 'edge refers to unknown node "result"' },
      ]);
      const nameOnly = await raw(`/api/workflows/${created.id}`, {
        method: 'PATCH',
        bearer: aliceKey,
        body: JSON.stringify({ name: '' }),
      });
      expect(nameOnly.status).toBe(422);
      expect(((await nameOnly.json()) as { errors: unknown[] }).errors).toEqual([
        { pointer: '/name', message: 'must be 1 to 200 characters' },
      ]);
    });

    it('answers 422, not a 500, to an update whose name is not a string (schemathesis found it)', async () => {
      const created = await create('Typed name');
      const response = await raw(`/api/workflows/${created.id}`, {
        method: 'PATCH',
        bearer: aliceKey,
        body: JSON.stringify({ description: '', edges: [], name: {}, nodes: [] }),
      });
      expect(response.status).toBe(422);
      const { errors } = (await response.json()) as { errors: { pointer: string }[] };
      expect(errors.map((e) => e.pointer)).toContain('/name');
    });

    it('answers 422 for a body of the wrong types (as a Prism mock does), and 400 for a bad path parameter', async () => {
      const wrongTypes = await raw('/api/workflows', {
        method: 'POST',
        bearer: aliceKey,
        body: JSON.stringify({ name: 42, nodes: 'none' }),
      });
      expect(wrongTypes.status).toBe(422);
      expect(wrongTypes.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const badId = await raw('/api/workflows/not%20an%20id', {
        method: 'PATCH',
        bearer: aliceKey,
        body: JSON.stringify({ name: 'x' }),
      });
      expect(badId.status).toBe(400);
    });
  });

  describe('list, pagination and search', () => {
    let carol: ApiClient;
    beforeAll(async () => {
      const carolId = await createUserFixture(server.ctx, 'carol');
      carol = createApiClient(server.baseUrl, {
        bearer: await createApiKeyFixture(server.ctx, carolId, 'carol', ['workflows']),
      });
      for (let i = 1; i <= 23; i++) await create(`Report ${String(i).padStart(2, '0')}`, carol);
      for (const name of ['100% organic', '100 percent organic', 'snake_case flow', 'snakeXcase flow'])
        await create(name, carol);
    });

    it('pages newest first with meta and RFC 8288 links', async () => {
      const first = await carol.GET('/api/workflows', { params: { query: { per_page: 10 } } });
      expect(first.data!.meta).toEqual({ page: 1, per_page: 10, total: 27, total_pages: 3 });
      expect(first.data!.data[0]!.name).toBe('snakeXcase flow');
      expect(first.response.headers.get('link')).toBe(
        '</api/workflows?page=1&per_page=10>; rel="first", </api/workflows?page=2&per_page=10>; rel="next", </api/workflows?page=3&per_page=10>; rel="last"',
      );
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const { data } = await carol.GET('/api/workflows', { params: { query: { page, per_page: 10 } } });
        seen.push(...data!.data.map((w) => w.name));
      }
      expect(seen).toHaveLength(27);
      expect(new Set(seen).size).toBe(27);
      expect(seen.slice(-2)).toEqual(['Report 02', 'Report 01']);
    });

    it('defaults to page 1 of 20', async () => {
      const { data } = await carol.GET('/api/workflows');
      expect(data!.meta).toEqual({ page: 1, per_page: 20, total: 27, total_pages: 2 });
      expect(data!.data).toHaveLength(20);
    });

    it('searches names case-insensitively across pages, keeping search in the links', async () => {
      const { data, response } = await carol.GET('/api/workflows', {
        params: { query: { search: 'REPORT 1', per_page: 4, page: 2 } },
      });
      expect(data!.meta).toEqual({ page: 2, per_page: 4, total: 10, total_pages: 3 });
      expect(data!.data.map((w) => w.name)).toEqual(['Report 15', 'Report 14', 'Report 13', 'Report 12']);
      expect(response.headers.get('link')).toContain('</api/workflows?page=3&per_page=4&search=REPORT+1>; rel="next"');
    });

    it('takes % and _ in the search literally', async () => {
      const names = async (search: string) =>
        (await carol.GET('/api/workflows', { params: { query: { search } } })).data!.data.map((w) => w.name);
      expect(await names('0% o')).toEqual(['100% organic']);
      expect(await names('e_c')).toEqual(['snake_case flow']);
      expect(await names('%')).toEqual(['100% organic']);
    });

    it('never equates different characters: an emoji finds only its own name, an accent only itself', async () => {
      const dave = createApiClient(server.baseUrl, {
        bearer: await createApiKeyFixture(server.ctx, await createUserFixture(server.ctx, 'dave'), 'dave', [
          'workflows',
        ]),
      });
      for (const name of ['Party 🎉', 'Smile 😀', 'Café', 'Cafe', 'Straße']) await create(name, dave);
      const names = async (search: string) =>
        (await dave.GET('/api/workflows', { params: { query: { search } } })).data!.data.map((w) => w.name);
      expect(await names('🎉')).toEqual(['Party 🎉']);
      expect(await names('😀')).toEqual(['Smile 😀']);
      expect(await names('CAFÉ')).toEqual(['Café']);
      expect(await names('cafe')).toEqual(['Cafe']);
      expect(await names('strasse')).toEqual([]);
      expect(await names('STRASSE')).toEqual([]);
      expect(await names('straße')).toEqual(['Straße']);
    });

    it('answers an empty page past the end, not an error', async () => {
      const { data, response } = await carol.GET('/api/workflows', { params: { query: { page: 50 } } });
      expect(response.status).toBe(200);
      expect(data!.data).toEqual([]);
    });

    it('refuses out-of-range page and per_page with 400 instead of clamping', async () => {
      for (const query of ['per_page=101', 'per_page=0', 'page=0', 'page=abc']) {
        const response = await raw(`/api/workflows?${query}`, { bearer: aliceKey });
        expect(response.status, query).toBe(400);
        expect((await response.json()).errors?.[0]?.pointer).toMatch(/^\/query\//);
      }
    });
  });

  describe('request bodies', () => {
    it('answers 413 for a body over the configured limit', async () => {
      const response = await raw('/api/workflows', {
        method: 'POST',
        bearer: aliceKey,
        body: JSON.stringify({ name: 'big', description: 'x'.repeat(70_000) }),
      });
      expect(response.status).toBe(413);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({ status: 413 });
    });

    it('answers 400 for malformed JSON', async () => {
      const response = await raw('/api/workflows', { method: 'POST', bearer: aliceKey, body: '{"name": "x",' });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ status: 400, detail: 'The request body is not valid JSON.' });
    });

    it('answers 400 for a malformed If-Match', async () => {
      const created = await create('Header');
      for (const ifMatch of ['"abc"', 'W/1', 'v1']) {
        const response = await raw(`/api/workflows/${created.id}`, {
          method: 'PATCH',
          bearer: aliceKey,
          headers: { 'If-Match': ifMatch },
          body: '{"name":"y"}',
        });
        expect(response.status, ifMatch).toBe(400);
      }
    });

    it('answers 412 for a weak If-Match, even of the current version (RFC 9110 13.1.1: If-Match compares strongly, a weak tag never matches)', async () => {
      const created = await create('Weak');
      const patch = await raw(`/api/workflows/${created.id}`, {
        method: 'PATCH',
        bearer: aliceKey,
        headers: { 'If-Match': 'W/"1"' },
        body: '{"name":"y"}',
      });
      expect(patch.status).toBe(412);
      expect(patch.headers.get('etag')).toBe('"1"');
      expect(await patch.json()).toMatchObject({
        code: 'stale_version',
        detail: 'The workflow is at version 1; a weak ETag (W/) never matches If-Match (RFC 9110 13.1.1).',
      });
      const del = await raw(`/api/workflows/${created.id}`, {
        method: 'DELETE',
        bearer: aliceKey,
        headers: { 'If-Match': 'W/"1", W/"2"' },
      });
      expect(del.status).toBe(412);
      // A list with a strong tag of the current version still matches.
      const strong = await raw(`/api/workflows/${created.id}`, {
        method: 'PATCH',
        bearer: aliceKey,
        headers: { 'If-Match': 'W/"1", "1"' },
        body: '{"name":"y"}',
      });
      expect(strong.status).toBe(200);
    });
  });

  describe('logs', () => {
    it('never contain an API key, and record no server error for any request above', () => {
      expect(server.logs.length).toBeGreaterThan(0);
      expect(server.logs.filter((line) => line.includes(aliceKey) || line.includes(noPermissionKey))).toEqual([]);
      expect(server.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50)).toEqual([]);
    });
  });
});
