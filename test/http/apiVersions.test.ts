// `Api-Version` (openapi.yaml info.description; src/http/apiVersions.ts): a client generated from
// 1.0.0 or 1.1.0 gets answers in that release's shape; without the header, the newest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { testDialects } from '../support/db.ts';

/** Only 1.0.0's node types and fields. */
const PLAIN = {
  name: 'plain',
  nodes: [
    { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'shout', type: 'template', config: { template: '{{ inputs.ticket | upcase }}' } },
    { id: 'model', type: 'llm_call', config: { model: 'echo' } },
    { id: 'result', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'input', to: 'shout' },
    { from: 'shout', to: 'model' },
    { from: 'model', to: 'result' },
  ],
};
/** A switch node and `case` edges: 1.1.0's, unknown to 1.0.0. */
const ROUTED = {
  name: 'routed',
  nodes: [
    { id: 'input', type: 'text_input', config: { variable: 'ticket' } },
    {
      id: 'route',
      type: 'switch',
      config: { value: 'inputs.ticket', cases: [{ name: 'urgent', operator: 'contains', value: 'now' }] },
    },
    { id: 'fast', type: 'template', config: { template: 'fast' } },
    { id: 'slow', type: 'template', config: { template: 'slow' } },
    { id: 'result', type: 'coalesce', config: {} },
  ],
  edges: [
    { from: 'input', to: 'route' },
    { from: 'route', to: 'fast', case: 'urgent' },
    { from: 'route', to: 'slow', case: 'default' },
    { from: 'fast', to: 'result' },
    { from: 'slow', to: 'result' },
  ],
};

describe.each(testDialects())('Api-Version (%s)', (dialect) => {
  let server: TestServer;
  let key: string;
  const ids: Record<string, string> = {};

  const call = async (path: string, version?: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        ...(version ? { 'Api-Version': version } : {}),
      },
    });
    // The answers of several operations and versions, read as plain JSON.
    return {
      status: res.status,
      version: res.headers.get('api-version'),
      type: res.headers.get('content-type'),
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      body: (await res.json()) as Record<string, any>,
    };
  };

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    const user = await createUser(server.ctx, { login: 'vera', password: 'test-password-1' });
    key = (
      await createAccessToken(server.ctx, {
        userId: user.id,
        namespace: 'vera',
        name: 'v',
        usageScenario: 'paid',
        permissions: ['workflows'],
      })
    ).token;
    for (const graph of [PLAIN, ROUTED]) {
      const created = await call('/api/workflows', undefined, { method: 'POST', body: JSON.stringify(graph) });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids[graph.name] = created.body.data.id;
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers the newest without the header, and with 1.2 or later', async () => {
    const newest = await call(`/api/workflows/${ids.routed}`);
    expect(newest.status).toBe(200);
    expect(newest.version).toBeNull();
    expect(newest.body.data.nodes.map((n: { type: string }) => n.type)).toContain('switch');
    const asked = await call(`/api/workflows/${ids.routed}`, '1.2');
    expect(asked.status).toBe(200);
    expect(asked.version).toBe('1.2');
    expect(asked.body).toEqual(newest.body);
  });

  it('1.1 shows the switch workflow whole; 1.0 leaves it out of the list and answers it alone 406', async () => {
    expect((await call(`/api/workflows/${ids.routed}`, '1.1')).body.data.edges).toContainEqual({
      from: 'route',
      to: 'fast',
      case: 'urgent',
    });
    const list = await call('/api/workflows', '1.0');
    expect(list.status).toBe(200);
    expect(list.version).toBe('1.0');
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([ids.plain]);
    const alone = await call(`/api/workflows/${ids.routed}`, '1.0.0');
    expect(alone.status).toBe(406);
    expect(alone.type).toMatch(/^application\/problem\+json/);
    expect(alone.body).toMatchObject({ status: 406, code: 'not_representable_in_api_version' });
    expect(alone.body.detail).toContain('switch');
    expect((await call(`/api/workflows/${ids.plain}`, '1.0')).body.data.nodes).toEqual(PLAIN.nodes);
  });

  it("1.0 reads a run without the fields 1.0.0 did not have (a step's attempts and output_value, costs)", async () => {
    const started = await call(`/api/workflows/${ids.plain}/run`, undefined, {
      method: 'POST',
      body: JSON.stringify({ inputs: { ticket: 'hi' } }),
      headers: {},
    });
    expect(started.status).toBeLessThan(300);
    const runId = started.body.data.id as string;
    let newest = await call(`/api/workflows/${ids.plain}/runs/${runId}`);
    for (let i = 0; i < 100 && newest.body.data.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      newest = await call(`/api/workflows/${ids.plain}/runs/${runId}`);
    }
    expect(newest.body.data.status).toBe('completed');
    expect(newest.body.data.logs.find((s: { node_id: string }) => s.node_id === 'model')).toHaveProperty('attempts', 1);
    const old = await call(`/api/workflows/${ids.plain}/runs/${runId}`, '1.0');
    expect(old.body.data).not.toHaveProperty('input_values');
    expect(newest.body.data).toHaveProperty('cost');
    expect(old.body.data).not.toHaveProperty('cost');
    for (const step of old.body.data.logs) {
      expect(step).not.toHaveProperty('attempts');
      expect(step).not.toHaveProperty('output_value');
      expect(step).not.toHaveProperty('cost');
    }
    const { logs: newestLogs, cost: _cost, ...rest } = newest.body.data;
    const { logs: oldLogs, ...oldRest } = old.body.data;
    expect(oldRest).toEqual(rest);
    expect(oldLogs.map((s: { status: string }) => s.status)).toEqual(
      newestLogs.map((s: { status: string }) => s.status),
    );
  });

  it('answers an unknown version 400 unsupported_api_version, naming the ones it answers', async () => {
    for (const version of ['0.9', '1.99', '2.0', 'latest']) {
      const refused = await call('/api/workflows', version);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'unsupported_api_version' });
      expect(refused.body.detail).toContain('1.0');
    }
  });
});
