// Storage quotas of workflows (docs/operating.md "Storage quotas"): USER_MAX_WORKFLOWS, WORKFLOW_MAX_VERSIONS
// (the retention rule keeps pinned versions) and USER_MAX_STORED_BYTES, through a real HTTP server
// and real stores (PostgreSQL; MariaDB too when TEST_MYSQL_URL is set), with the typed client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { storedBytes } from './quotas.ts';
import { workflowsUser } from '../../test/support/workflowUsers.ts';

const MAX_WORKFLOWS = 3;
const MAX_VERSIONS = 3;
const MAX_BYTES = 30_000;

const clientFor = workflowsUser;

describe.each(testDialects())('storage quotas of workflows on %s', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      runs: true,
      env: {
        USER_MAX_WORKFLOWS: String(MAX_WORKFLOWS),
        WORKFLOW_MAX_VERSIONS: String(MAX_VERSIONS),
        USER_MAX_STORED_BYTES: String(MAX_BYTES),
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const user = (login: string) => clientFor(server.ctx, server.baseUrl, login);
  const create = (client: ApiClient, body: Partial<Schemas['WorkflowCreate']> = {}) =>
    client.POST('/api/workflows', { body: { name: 'Quota', ...seedGraph(), ...body } });
  const update = (client: ApiClient, id: string, body: Schemas['WorkflowUpdate']) =>
    client.PATCH('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } }, body });
  async function created(client: ApiClient, body: Partial<Schemas['WorkflowCreate']> = {}): Promise<string> {
    const { data, error } = await create(client, body);
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }
  async function versionsOf(client: ApiClient, id: string): Promise<number[]> {
    const { data } = await client.GET('/api/workflows/{workflow_id}/versions', {
      params: { path: { workflow_id: id }, query: { per_page: 100 } },
    });
    return data!.data.map((v) => v.version);
  }

  it('refuses a create past USER_MAX_WORKFLOWS with 409 quota_exceeded naming the limit, and takes one once a workflow is deleted', async () => {
    const { client } = await user('wf-count');
    const { client: other } = await user('wf-count-other');
    const ids: string[] = [];
    for (let i = 0; i < MAX_WORKFLOWS; i++) ids.push(await created(client, { name: `w${i}` }));
    const refused = await create(client, { name: 'one too many' });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ status: 409, code: 'quota_exceeded' });
    expect(refused.error!.detail).toContain('USER_MAX_WORKFLOWS');
    expect(refused.error!.detail).toContain(String(MAX_WORKFLOWS));
    // Another user's quota is their own.
    expect((await create(other)).response.status).toBe(201);
    await client.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: ids[0]! } } });
    expect((await create(client, { name: 'after a delete' })).response.status).toBe(201);
  });

  it('keeps the newest WORKFLOW_MAX_VERSIONS versions and every version a schedule or another workflow pins', async () => {
    const { client } = await user('wf-versions');
    const id = await created(client, { name: 'Pinned' });
    for (const n of [2, 3]) expect((await update(client, id, { description: `v${n}` })).response.status).toBe(200);
    // A schedule pins version 1; another workflow's `workflow` node pins version 2, a third's `map` node version 3.
    const schedule = await client.POST('/api/workflows/{workflow_id}/schedules', {
      params: { path: { workflow_id: id } },
      body: { cron: '0 9 * * *', inputs: { ticket: 'x' }, version: 1 },
    });
    expect(schedule.response.status).toBe(201);
    const caller = await create(client, {
      name: 'Caller',
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
        { id: 'call', type: 'workflow', config: { workflow_id: id, version: 2 } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'call' },
        { from: 'call', to: 'out' },
      ],
    });
    expect(caller.response.status, JSON.stringify(caller.error)).toBe(201);
    const mapper = await create(client, {
      name: 'Mapper',
      nodes: [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'parts', type: 'split', config: { by: 'separator', separator: ';' } },
        { id: 'each', type: 'map', config: { workflow_id: id, workflow_version: 3, item_variable: 'ticket' } },
        { id: 'out', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [
        { from: 'doc', to: 'parts' },
        { from: 'parts', to: 'each' },
        { from: 'each', to: 'out' },
      ],
    });
    expect(mapper.response.status, JSON.stringify(mapper.error)).toBe(201);
    for (const n of [4, 5, 6, 7])
      expect((await update(client, id, { description: `v${n}` })).response.status).toBe(200);
    // Newest three (7, 6, 5), and the pinned 1, 2 and 3; 4 is gone.
    expect(await versionsOf(client, id)).toEqual([7, 6, 5, 3, 2, 1]);
    const gone = await client.GET('/api/workflows/{workflow_id}/versions/{version}', {
      params: { path: { workflow_id: id, version: 4 } },
    });
    expect(gone.response.status).toBe(404);
    // Once nothing pins them, the next write lets them go too.
    await client.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: caller.data!.data.id } } });
    await client.DELETE('/api/workflows/{workflow_id}', { params: { path: { workflow_id: mapper.data!.data.id } } });
    await client.DELETE('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
      params: { path: { workflow_id: id, schedule_id: schedule.data!.data.id } },
    });
    expect((await update(client, id, { description: 'v8' })).response.status).toBe(200);
    expect(await versionsOf(client, id)).toEqual([8, 7, 6]);
    // A restore is a write like any other: it keeps the rule.
    const restored = await client.POST('/api/workflows/{workflow_id}/versions/{version}/restore', {
      params: { path: { workflow_id: id, version: 6 } },
    });
    expect(restored.response.status).toBe(201);
    expect(await versionsOf(client, id)).toEqual([9, 8, 7]);
  });

  it('refuses a write that would pass USER_MAX_STORED_BYTES with 409 quota_exceeded naming the limit, storing nothing', async () => {
    const { client, userId } = await user('wf-bytes');
    const big = 'x'.repeat(9_999);
    const id = await created(client, { name: 'Big', description: big });
    expect((await update(client, id, { description: big + 'y' })).response.status).toBe(200);
    const before = await storedBytes(server.ctx.db, userId);
    expect(before).toBeGreaterThan(20_000);
    // A third version of 10 KB would pass 30 KB.
    const refused = await update(client, id, { description: big + 'z' });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'quota_exceeded' });
    expect(refused.error!.detail).toContain('USER_MAX_STORED_BYTES');
    expect(refused.error!.detail).toContain(String(MAX_BYTES));
    // Nothing was stored: same version, same bytes.
    const { data } = await client.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
    expect(data!.data.version).toBe(2);
    expect(await storedBytes(server.ctx.db, userId)).toBe(before);
    // A create past it is refused too, and leaves no workflow behind.
    const refusedCreate = await create(client, { name: 'Another big', description: big });
    expect(refusedCreate.response.status).toBe(409);
    expect(refusedCreate.error!.detail).toContain('USER_MAX_STORED_BYTES');
    const list = await client.GET('/api/workflows', {});
    expect(list.data!.meta.total).toBe(1);
    // Any edit of the big one would be a third 10 KB version; a small workflow still fits.
    expect((await update(client, id, { name: 'Big, renamed' })).response.status).toBe(409);
    expect((await create(client, { name: 'Small' })).response.status).toBe(201);
  });
});
