// A node's `ui` (NodeLayout: where the console's canvas draws it) through a real HTTP server and a
// real store (PostgreSQL; MySQL too when TEST_MYSQL_URL is set), called with the typed client:
// kept as sent in the workflow and in each version, and refused, at its pointer, when malformed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

type WorkflowNode = Schemas['WorkflowNode'];

/** The seed graph with each node placed at `x + 200 * i`, `y`. */
function placed(x: number, y: number) {
  const { nodes, edges } = seedGraph();
  return { nodes: nodes.map((n, i): WorkflowNode => ({ ...n, ui: { x: x + 200 * i, y } })), edges };
}

describe.each(testDialects())('node layout (ui) on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const user = await createUser(server.ctx, { login: 'alice', password: 'correct horse battery' });
    ({ token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'alice',
      name: 'layout',
      usageScenario: 'paid',
      permissions: ['workflows'],
    }));
    alice = createApiClient(server.baseUrl, { bearer: token });
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (body: unknown) =>
    fetch(`${server.baseUrl}/api/workflows`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('keeps each node’s ui as sent, in the workflow and in each of its versions', async () => {
    const first = placed(10.5, -40);
    const created = await alice.POST('/api/workflows', { body: { name: 'Placed', ...first } });
    expect(created.response.status).toBe(201);
    const id = created.data!.data.id;
    expect(created.data!.data.nodes).toEqual(first.nodes);

    const moved = placed(300, 120);
    const updated = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: id } },
      body: { ...moved },
    });
    expect(updated.response.status).toBe(200);
    const read = await alice.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
    expect(read.data!.data.nodes).toEqual(moved.nodes);
    const version = (v: number) =>
      alice.GET('/api/workflows/{workflow_id}/versions/{version}', {
        params: { path: { workflow_id: id, version: v } },
      });
    expect((await version(1)).data!.data.nodes).toEqual(first.nodes);
    expect((await version(2)).data!.data.nodes).toEqual(moved.nodes);
  });

  it('accepts a graph where only some nodes are placed, and one where none is', async () => {
    const { nodes, edges } = seedGraph();
    const some = [{ ...nodes[0]!, ui: { x: 0, y: 0 } }, ...nodes.slice(1)];
    const res = await alice.POST('/api/workflows', { body: { name: 'Partly placed', nodes: some, edges } });
    expect(res.response.status).toBe(201);
    expect(res.data!.data.nodes).toEqual(some);
    expect(res.data!.data.nodes[1]).not.toHaveProperty('ui');
  });

  it('refuses a malformed ui with a problem at its pointer, and stores nothing', async () => {
    const { nodes, edges } = seedGraph();
    const withUi = (ui: unknown) => ({ name: 'Bad layout', nodes: [{ ...nodes[0], ui }, ...nodes.slice(1)], edges });
    const cases: [unknown, string][] = [
      [{ x: 1, y: 2, z: 3 }, '/nodes/0/ui/z'],
      [{ x: 1 }, '/nodes/0/ui'],
      [{ x: 'left', y: 0 }, '/nodes/0/ui/x'],
      [{ x: 0, y: 1e7 }, '/nodes/0/ui/y'],
      [[1, 2], '/nodes/0/ui'],
    ];
    for (const [ui, pointer] of cases) {
      const res = await post(withUi(ui));
      expect([400, 422], JSON.stringify(ui)).toContain(res.status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { errors?: { pointer: string }[] };
      expect(
        body.errors?.some((e) => e.pointer.startsWith(pointer)),
        `${JSON.stringify(ui)}: ${JSON.stringify(body)}`,
      ).toBe(true);
    }
    const list = await alice.GET('/api/workflows', {});
    expect(list.data!.data.map((w) => w.name)).not.toContain('Bad layout');
  });
});
