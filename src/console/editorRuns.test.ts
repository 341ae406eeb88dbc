import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createWorkflow } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';
import * as runStore from '../runs/store.ts';

// The editor's run routes (src/console/pages/editorRuns.ts), by the session as the editor's script
// calls them: a run of the saved graph, its steps, a node's test; every refusal a JSON problem
// with the API's status (another user's workflow or run a 404, inputs or pinned data that do not
// fit a 400), never a 500; and a POST without the session's CSRF token a 403 that starts nothing.

describe.each(testDialects())('the editor’s run routes on %s', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let mine: string;
  let theirs: string;
  let csrf: string;
  let myId: number;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    const me = await createUser(server.ctx, { login: 'editor', password: 'test-password-1' });
    const them = await createUser(server.ctx, { login: 'stranger', password: 'test-password-2' });
    myId = me.id;
    mine = (await createWorkflow(server.ctx, me.id, { name: 'Mine', ...seedGraph('echo') })).id;
    theirs = (await createWorkflow(server.ctx, them.id, { name: 'Theirs', ...seedGraph('echo') })).id;
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'editor', 'test-password-1', '/workflows')).status).toBe(303);
    csrf = formFields(await (await browser.fetch(`/workflows/${mine}/edit`)).text()).csrf_token!;
  });
  afterAll(() => server?.close());

  // The answers' shapes vary by route (a run, a run's detail, a test, a problem): read loosely, checked by matchers.
  interface Answer {
    data: { id: string; status: string; logs: object[] };
    status?: number;
    code?: string;
    errors?: { pointer: string }[];
  }
  const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Answer });

  it('starts a run of the saved graph and reads its steps; a switch-free run carries no case', async () => {
    const started = await json(
      await browser.post(`/workflows/${mine}/editor/run`, { csrf_token: csrf, input_ticket: 'hi' }),
    );
    expect(started.status).toBe(202);
    const runId = started.body.data.id as string;
    let detail: Partial<Answer['data']> = {};
    for (let i = 0; i < 100 && !['completed', 'failed'].includes(detail.status ?? ''); i++) {
      detail = (await json(await browser.fetch(`/workflows/${mine}/runs/${runId}/detail`))).body.data;
      if (detail.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
    }
    expect(detail).toMatchObject({ status: 'completed', inputs: { ticket: 'hi' } });
    expect(detail.logs!.map((s) => (s as { node_id: string }).node_id)).toEqual(['input', 'summarise', 'result']);
    expect(detail.logs!.some((s) => 'case' in s)).toBe(false);
  });

  it('the run page says the stored case, and for a step logged before it was stored the derived one', async () => {
    const routed = await createWorkflow(server.ctx, myId, {
      name: 'Routed',
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
        { id: 'route', type: 'switch', config: { cases: [{ name: 'big', operator: 'contains', value: 'big' }] } },
        { id: 'yes', type: 'text_output', config: { format: 'plain' } },
        { id: 'no', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'route' },
        { from: 'route', to: 'yes', case: 'big' },
        { from: 'route', to: 'no', case: 'default' },
      ],
    });
    const started = await json(
      await browser.post(`/workflows/${routed.id}/editor/run`, { csrf_token: csrf, input_ticket: 'a big one' }),
    );
    const runId = started.body.data.id;
    let status = '';
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      const detail = (await json(await browser.fetch(`/workflows/${routed.id}/runs/${runId}/detail`))).body.data;
      status = detail.status;
      if (status === 'completed') expect(detail.logs).toContainEqual(expect.objectContaining({ case: 'big' }));
      else await new Promise((r) => setTimeout(r, 100));
    }
    const taken = async () =>
      /data-field="case">Took case <code>(\w+)<\/code>/.exec(
        await (await browser.fetch(`/workflows/${routed.id}/runs/${runId}`)).text(),
      )?.[1];
    expect(await taken()).toBe('big');
    await server.ctx.db('run_steps').where({ run_id: runId }).update({ chosen_case: null });
    expect(await taken()).toBe('big');
  });

  it('answers another user’s workflow or run, and an unknown one, with a 404 problem', async () => {
    const run = await json(
      await browser.post(`/workflows/${theirs}/editor/run`, { csrf_token: csrf, input_ticket: 'x' }),
    );
    expect(run).toMatchObject({ status: 404, body: { status: 404, code: 'workflow_not_found' } });
    const test = await json(
      await browser.post(`/workflows/${theirs}/editor/nodes/summarise/test`, { csrf_token: csrf, body: '{}' }),
    );
    expect(test).toMatchObject({ status: 404, body: { code: 'workflow_not_found' } });
    const detail = await json(await browser.fetch(`/workflows/${mine}/runs/run_nope/detail`));
    expect(detail.status).toBe(404);
    expect(detail.body.status).toBe(404);
    const node = await json(await browser.post(`/workflows/${mine}/editor/nodes/nope/test`, { csrf_token: csrf }));
    expect(node).toMatchObject({ status: 404, body: { code: 'node_not_found' } });
  });

  it('refuses inputs and pinned data that do not fit with a 400 problem naming them', async () => {
    const missing = await json(await browser.post(`/workflows/${mine}/editor/run`, { csrf_token: csrf }));
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ pointer: '/body/inputs/ticket' })]),
    );
    for (const body of ['not json', '[1, 2]', '"text"']) {
      const bad = await json(
        await browser.post(`/workflows/${mine}/editor/nodes/summarise/test`, { csrf_token: csrf, body }),
      );
      expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_field', errors: [{ pointer: '/body' }] } });
    }
    const unpinned = await json(
      await browser.post(`/workflows/${mine}/editor/nodes/summarise/test`, { csrf_token: csrf, body: '{}' }),
    );
    expect(unpinned).toMatchObject({ status: 400, body: { errors: [{ pointer: '/body/upstream/input' }] } });
  });

  it('tests a node on pinned values, storing no run', async () => {
    const before = await runStore.countRuns(server.ctx.db, myId, mine);
    const body = JSON.stringify({ upstream: { input: 'pinned' } });
    const tested = await json(
      await browser.post(`/workflows/${mine}/editor/nodes/summarise/test`, { csrf_token: csrf, body }),
    );
    expect(tested).toMatchObject({ status: 200, body: { data: { node_id: 'summarise', status: 'completed' } } });
    expect(await runStore.countRuns(server.ctx.db, myId, mine)).toBe(before);
  });

  it('refuses a POST without the session’s CSRF token (403) and starts nothing', async () => {
    const before = await runStore.countRuns(server.ctx.db, myId, mine);
    expect((await browser.post(`/workflows/${mine}/editor/run`, { input_ticket: 'x' })).status).toBe(403);
    const body = JSON.stringify({ upstream: { input: 'x' } });
    expect((await browser.post(`/workflows/${mine}/editor/nodes/summarise/test`, { body })).status).toBe(403);
    expect(await runStore.countRuns(server.ctx.db, myId, mine)).toBe(before);
  });
});
