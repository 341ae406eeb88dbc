// Workflow versions through a real HTTP server, a real store (PostgreSQL; MySQL
// too when TEST_MYSQL_URL is set) and a real queue with an in-process worker, called with the
// typed client integrators use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import type { AppContext } from '../context.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { purgeDeletedWorkflows } from './service.ts';

type WorkflowNode = Schemas['WorkflowNode'];

async function apiKeyFor(ctx: AppContext, login: string): Promise<string> {
  const user = await createUser(ctx, { login, password: 'correct horse battery' });
  const { token } = await createAccessToken(ctx, {
    userId: user.id,
    namespace: login,
    name: 'versions',
    usageScenario: 'paid',
    permissions: ['workflows'],
  });
  return token;
}

/** The seed graph with its text_input variable renamed: a later version that takes other inputs. */
function graphWithVariable(variable: string) {
  const { nodes, edges } = seedGraph();
  return {
    nodes: nodes.map((n): WorkflowNode => (n.type === 'text_input' ? { ...n, config: { variable } } : n)),
    edges,
  };
}

describe.each(testDialects())('workflow versions on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true, env: { DELETED_WORKFLOW_RETENTION_SECONDS: '3600' } });
    alice = createApiClient(server.baseUrl, { bearer: await apiKeyFor(server.ctx, 'alice') });
    bob = createApiClient(server.baseUrl, { bearer: await apiKeyFor(server.ctx, 'bob') });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function create(name: string, client = alice): Promise<string> {
    const { data, error } = await client.POST('/api/workflows', { body: { name, ...graphWithVariable('ticket') } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }

  async function update(id: string, body: Schemas['WorkflowUpdate']) {
    const { data, error } = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: id } },
      body,
    });
    if (!data) throw new Error(`update failed: ${JSON.stringify(error)}`);
    return data.data;
  }

  const listVersions = (
    id: string,
    query: { page?: number; per_page?: number; search?: string } = {},
    client = alice,
  ) => client.GET('/api/workflows/{workflow_id}/versions', { params: { path: { workflow_id: id }, query } });
  const getVersion = (id: string, version: number, client = alice) =>
    client.GET('/api/workflows/{workflow_id}/versions/{version}', { params: { path: { workflow_id: id, version } } });
  const restore = (id: string, version: number, ifMatch?: string, client = alice) =>
    client.POST('/api/workflows/{workflow_id}/versions/{version}/restore', {
      params: { path: { workflow_id: id, version }, ...(ifMatch ? { header: { 'If-Match': ifMatch } } : {}) },
    });
  const run = (id: string, inputs: Record<string, string>, version?: number, client = alice) =>
    client.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: id } },
      body: { inputs, ...(version ? { version } : {}) },
    });

  it('stores version 1 on create and one immutable version per update, listed newest first', async () => {
    const id = await create('Summariser');
    await update(id, { name: 'Summariser 2' });
    await update(id, { ...graphWithVariable('text') });

    const { data, response } = await listVersions(id);
    expect(response.status).toBe(200);
    expect(data!.meta).toEqual({ page: 1, per_page: 20, total: 3, total_pages: 1 });
    expect(data!.data.map((v) => [v.version, v.name, v.restored_from])).toEqual([
      [3, 'Summariser 2', null],
      [2, 'Summariser 2', null],
      [1, 'Summariser', null],
    ]);
    // Version 1 kept the graph it had, although the workflow's changed since.
    const first = await getVersion(id, 1);
    expect(first.data!.data).toMatchObject({
      workflow_id: id,
      version: 1,
      name: 'Summariser',
      ...graphWithVariable('ticket'),
    });
    expect((await getVersion(id, 3)).data!.data.nodes).toEqual(graphWithVariable('text').nodes);
  });

  it('pages versions like every list: per_page, meta, an RFC 8288 Link header and a name search', async () => {
    const id = await create('Paged');
    for (let i = 2; i <= 5; i++) await update(id, { name: i === 4 ? 'Renamed' : `Paged ${i}` });
    const { data, response } = await listVersions(id, { page: 2, per_page: 2 });
    expect(data!.data.map((v) => v.version)).toEqual([3, 2]);
    expect(data!.meta).toEqual({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    const path = `/api/workflows/${id}/versions`;
    expect(response.headers.get('link')).toBe(
      `<${path}?page=1&per_page=2>; rel="first", <${path}?page=1&per_page=2>; rel="prev", <${path}?page=3&per_page=2>; rel="next", <${path}?page=3&per_page=2>; rel="last"`,
    );
    const found = await listVersions(id, { search: 'RENAMED' });
    expect(found.data!.data.map((v) => v.version)).toEqual([4]);
    expect((await listVersions(id, { per_page: 101 })).response.status).toBe(400);
  });

  it('answers 404 workflow_version_not_found for a version in the URL the workflow does not have, and 400 for one named in a run body', async () => {
    const id = await create('Missing');
    const { response, error } = await getVersion(id, 2);
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ code: 'workflow_version_not_found' });
    expect((await restore(id, 9)).error).toMatchObject({ status: 404, code: 'workflow_version_not_found' });
    // The workflow in the URL exists: the body is what is wrong.
    expect((await run(id, { ticket: 'x' }, 9)).error).toMatchObject({
      status: 400,
      code: 'invalid_field',
      errors: [{ pointer: '/body/version' }],
    });
  });

  it("answers 404 workflow_not_found for another user's workflow, on every version endpoint and a run asking a version", async () => {
    const id = await create('Private');
    expect((await listVersions(id, {}, bob)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });
    expect((await getVersion(id, 1, bob)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });
    expect((await restore(id, 1, undefined, bob)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });
    expect((await run(id, { ticket: 'x' }, 1, bob)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });
    expect((await listVersions(id)).data!.meta.total).toBe(1); // nothing of bob's reached it
  });

  it('restores an old version as a new one that names it, leaving every version in place', async () => {
    const id = await create('Restorable');
    await update(id, { name: 'Changed', ...graphWithVariable('text') });
    const { data, response } = await restore(id, 1, '"2"');
    expect(response.status).toBe(201);
    expect(response.headers.get('etag')).toBe('"3"');
    expect(response.headers.get('location')).toBe(`/api/workflows/${id}/versions/3`);
    expect(data!.data).toMatchObject({ id, version: 3, name: 'Restorable', ...graphWithVariable('ticket') });
    expect((await getVersion(id, 3)).data!.data).toMatchObject({ version: 3, restored_from: 1, name: 'Restorable' });
    expect((await listVersions(id)).data!.data.map((v) => v.version)).toEqual([3, 2, 1]);
  });

  it('honours If-Match on restore: a stale one is 412 with the current ETag and stores nothing', async () => {
    const id = await create('Guarded');
    await update(id, { name: 'Guarded 2' });
    const { response, error } = await restore(id, 1, '"1"');
    expect(response.status).toBe(412);
    expect(response.headers.get('etag')).toBe('"2"');
    expect(error).toMatchObject({ code: 'stale_version' });
    expect((await listVersions(id)).data!.meta.total).toBe(2);
  });

  it('runs a requested version with its own inputs and records it; without one, the current version', async () => {
    const id = await create('Pinned');
    await update(id, { ...graphWithVariable('text') });
    const old = await run(id, { ticket: 'from version one' }, 1);
    expect(old.response.status).toBe(202);
    expect(old.data!.data).toMatchObject({ workflow_version: 1, inputs: { ticket: 'from version one' } });
    const current = await run(id, { text: 'from version two' });
    expect(current.data!.data.workflow_version).toBe(2);
    // The inputs are checked against the version asked for.
    expect((await run(id, { text: 'x' }, 1)).error).toMatchObject({ status: 400, code: 'invalid_run_inputs' });
    const ended = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: id, run_id: old.data!.data.id }, header: { Prefer: 'wait=10' } },
    });
    expect(ended.data!.data).toMatchObject({
      status: 'completed',
      workflow_version: 1,
      output: { result: 'from version one' },
    });
  });

  it('replays an Idempotency-Key only for the same version: another one is a 409', async () => {
    const id = await create('Keyed');
    await update(id, { name: 'Keyed 2' });
    const start = (version: number) =>
      alice.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: id }, header: { 'Idempotency-Key': 'same-key' } },
        body: { inputs: { ticket: 'x' }, version },
      });
    const first = await start(1);
    expect((await start(1)).data!.data.id).toBe(first.data!.data.id);
    expect((await start(2)).error).toMatchObject({ status: 409, code: 'idempotency_key_reused' });
  });

  it("keeps a deleted workflow's versions readable until retention purges them, and never restores one", async () => {
    const id = await create('Deleted');
    await update(id, { name: 'Deleted 2' });
    expect(
      (await alice.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } })).response.status,
    ).toBe(204);
    expect((await listVersions(id)).data!.meta.total).toBe(2);
    expect((await getVersion(id, 1)).data!.data.name).toBe('Deleted');
    expect((await restore(id, 1)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });
    expect((await run(id, { ticket: 'x' }, 1)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });

    const later = { ...server.ctx, now: () => Date.now() + 3601_000 };
    expect(await purgeDeletedWorkflows(later, 3600_000)).toBeGreaterThanOrEqual(1);
    expect((await listVersions(id)).error).toMatchObject({ status: 404, code: 'workflow_not_found' });
    const left = (await server.ctx.db('workflow_versions').where({ workflow_id: id }).count({ n: '*' }).first()) as {
      n: number | string;
    };
    expect(Number(left.n)).toBe(0);
  });

  it('stores exactly one version per update when updates race: numbers 1..N+1, each the workflow as its update left it', async () => {
    const id = await create('Raced');
    await Promise.all([1, 2, 3, 4, 5].map((i) => update(id, { description: `writer ${i}` })));
    const { data } = await listVersions(id);
    expect(data!.data.map((v) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(new Set(data!.data.slice(0, 5).map((v) => v.description)).size).toBe(5);
    const { data: workflow } = await alice.GET('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: id } },
    });
    expect(workflow!.data.description).toBe(data!.data[0]!.description);
  });
});
