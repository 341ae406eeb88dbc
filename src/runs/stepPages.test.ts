// A run's steps a page at a time (listRunSteps), its events as JSON pages (listRunEvents) and
// getRun's bounded logs, with a run of two maps
// of 1,000 items each (2,000 items, 4,000 item steps) through a real server, store (PostgreSQL;
// MariaDB too when TEST_MYSQL_URL is set) and worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';

type Node = Schemas['WorkflowNode'];

const ITEMS = 1000;
const body = {
  nodes: [
    { id: 'item', type: 'text_input', config: { variable: 'item' } },
    { id: 'out', type: 'text_output', config: { format: 'json' } },
  ] as Node[],
  edges: [{ from: 'item', to: 'out' }],
};
const graph = {
  nodes: [
    { id: 'list', type: 'text_input', config: { variable: 'list', type: 'array' } },
    { id: 'each0', type: 'map', config: { body, concurrency: 16, max_items: ITEMS } },
    { id: 'each1', type: 'map', config: { body, concurrency: 16, max_items: ITEMS } },
    { id: 'result', type: 'text_output', config: { format: 'json' } },
  ] as Node[],
  edges: [
    { from: 'list', to: 'each0' },
    { from: 'list', to: 'each1' },
    { from: 'each0', to: 'result' },
    { from: 'each1', to: 'result' },
  ],
};

describe.each(testDialects())('run steps in pages on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;
  let bob: ApiClient;
  let ids: { workflow_id: string; run_id: string };

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true, env: { RUN_DETAIL_MAX_ITEM_STEPS: '100' } });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'pages-alice');
    bob = await workflowsClient(server.ctx, server.baseUrl, 'pages-bob');
    const wf = await alice.POST('/api/workflows', { body: { name: 'wide', ...graph } });
    expect(wf.error, JSON.stringify(wf.error)).toBeUndefined();
    const workflow_id = wf.data!.data.id;
    const started = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id } },
      body: { inputs: { list: Array.from({ length: ITEMS }, (_, i) => i) } as unknown as Record<string, string> },
    });
    ids = { workflow_id, run_id: started.data!.data.id };
    for (;;) {
      const run = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
        params: { path: ids, header: { Prefer: 'wait=60' } },
      });
      if (['completed', 'failed', 'cancelled'].includes(run.data!.data.status)) {
        expect(run.data!.data.status, JSON.stringify(run.data!.data.error)).toBe('completed');
        break;
      }
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('bounds getRun: every step outside the items, the first 100 inside, and logs_truncated', async () => {
    const { data } = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path: ids } });
    const logs = data!.data.logs;
    expect(data!.data.logs_truncated).toBe(true);
    expect(logs.filter((s) => !s.node_id.includes('['))).toHaveLength(4);
    expect(logs.filter((s) => s.node_id.includes('['))).toHaveLength(100);
    expect(logs.map((s) => s.node_id)).toEqual(expect.arrayContaining(['list', 'each0', 'each1', 'result']));
  });

  it("bounds the console's run page as getRun: it says the rest is on listRunSteps", async () => {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'pages-alice', 'correct horse battery')).status).toBe(303);
    const res = await browser.fetch(`/workflows/${ids.workflow_id}/runs/${ids.run_id}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('id="steps-truncated"');
    expect(page).toContain(`/api/workflows/${ids.workflow_id}/runs/${ids.run_id}/steps`);
  });

  it('pages through every step, in execution order, none twice, each page bounded, with a next link', async () => {
    const stored = (await server.ctx
      .db('run_steps')
      .where({ run_id: ids.run_id })
      .orderBy('id')
      .pluck('node_id')) as string[];
    expect(stored.length).toBe(4 + 2 * ITEMS * 2);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}/steps', {
        params: { path: ids, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      });
      expect(page.response.status).toBe(200);
      expect(page.data!.data.length).toBeLessThanOrEqual(100);
      seen.push(...page.data!.data.map((s) => s.node_id));
      cursor = page.data!.meta.next_cursor ?? undefined;
      const link = page.response.headers.get('link');
      if (cursor) expect(link).toContain(`steps?cursor=${cursor}&limit=100>; rel="next"`);
      else expect(link).toBeNull();
      pages++;
    } while (cursor);
    expect(seen).toEqual(stored);
    expect(pages).toBe(Math.ceil(stored.length / 100));
    // The default page is 50.
    const first = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}/steps', { params: { path: ids } });
    expect(first.data!.data).toHaveLength(50);
    expect(first.data!.meta).toMatchObject({ limit: 50, next_cursor: expect.any(String) });
  });

  it('pages through the stored events as JSON (event-log), as the stream numbers them', async () => {
    const stored = (await server.ctx
      .db('run_events')
      .where({ run_id: ids.run_id })
      .orderBy('seq')
      .select('seq', 'type', 'data')) as { seq: number; type: string; data: string }[];
    expect(stored.length).toBeGreaterThan(6);
    const seen: { id: number; event: string; data: unknown }[] = [];
    let after = 0;
    for (;;) {
      const page = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}/event-log', {
        params: { path: ids, query: { after, limit: 3 } },
      });
      expect(page.response.status).toBe(200);
      expect(page.data!.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data!.data);
      const next = page.data!.meta.next_after;
      if (next === null) {
        expect(page.response.headers.get('link')).toBeNull();
        break;
      }
      expect(page.response.headers.get('link')).toContain(`event-log?after=${next}&limit=3>; rel="next"`);
      after = next;
    }
    expect(seen).toEqual(
      stored.map((e) => ({ id: Number(e.seq), event: e.type, data: JSON.parse(e.data) as unknown })),
    );
    expect(seen.at(-1)!.event).toBe('run.finished');
    const foreign = await bob.GET('/api/workflows/{workflow_id}/runs/{run_id}/event-log', { params: { path: ids } });
    expect(foreign.response.status).toBe(404);
  });

  it('refuses a malformed cursor or limit (400), and another user’s run (404)', async () => {
    for (const query of [{ cursor: 'abc' }, { limit: 101 }, { limit: 0 }]) {
      const bad = await alice.GET('/api/workflows/{workflow_id}/runs/{run_id}/steps', {
        params: { path: ids, query },
      });
      expect(bad.response.status, JSON.stringify(query)).toBe(400);
    }
    const foreign = await bob.GET('/api/workflows/{workflow_id}/runs/{run_id}/steps', { params: { path: ids } });
    expect(foreign.response.status).toBe(404);
  });
});
