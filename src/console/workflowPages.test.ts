import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import * as runStore from '../runs/store.ts';
import { createWorkflow } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';

// The console's workflow pages over HTTP, on each store: only the signed-in user's workflows and
// runs (anything else is a 404 page), CSRF on the run form, a resubmitted form starts one run, and
// every name a user chose is escaped, in the SVG too. (The browser test drives the same pages.)

describe.each(testDialects())('workflow pages (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let mine: string;
  let other: string;
  let otherUserId: number;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    const me = await createUser(server.ctx, { login: 'runner', password: 'test-password-1' });
    const them = await createUser(server.ctx, { login: 'someone', password: 'test-password-2' });
    otherUserId = them.id;
    // Created through the service the API uses (the browser test creates them over the API).
    mine = (
      await createWorkflow(server.ctx, me.id, {
        name: 'Mine <script>alert(1)</script>',
        description: 'Says "hi" & <b>bye</b>',
        ...seedGraph('echo'),
      })
    ).id;
    await createWorkflow(server.ctx, me.id, { name: 'Second', ...seedGraph('echo') });
    other = (await createWorkflow(server.ctx, them.id, { name: 'Theirs', ...seedGraph('echo') })).id;
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'runner', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  it('sends a visitor who is not signed in to the login page, and back afterwards', async () => {
    const res = await new Browser(server.baseUrl).fetch(`/workflows/${mine}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(`/workflows/${mine}`)}`);
  });

  it('escapes every name and description, in the page and in the SVG', async () => {
    const list = await (await browser.fetch('/workflows')).text();
    expect(list).toContain('Mine &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(list).not.toContain('<script>alert');
    const page = await (await browser.fetch(`/workflows/${mine}`)).text();
    expect(page).toContain('aria-label="The graph of Mine &lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(page).toContain('Says &quot;hi&quot; &amp; &lt;b&gt;bye&lt;/b&gt;');
    expect(page).not.toContain('<b>bye');
  });

  it('refuses a run form without its CSRF token (403) and starts nothing', async () => {
    const res = await browser.post(`/workflows/${mine}/run`, { input_ticket: 'x' });
    expect(res.status).toBe(403);
    expect(await runStore.countRuns(server.ctx.db, (await userId('runner'))!, mine)).toBe(0);
  });

  async function userId(login: string): Promise<number | undefined> {
    const row = (await server.ctx.db('users').where({ login }).first()) as { id: number | string } | undefined;
    return row ? Number(row.id) : undefined;
  }

  it('starts one run per form: the same form sent twice lands on the same run; the list shows its status', async () => {
    const fields = formFields(await (await browser.fetch(`/workflows/${mine}`)).text());
    expect(fields.idempotency_key).toMatch(/^console-/);
    const send = () =>
      browser.post(`/workflows/${mine}/run`, {
        csrf_token: fields.csrf_token!,
        idempotency_key: fields.idempotency_key!,
        input_ticket: '  keeps its spaces  ',
      });
    const first = await send();
    expect(first.status).toBe(303);
    const location = first.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^/workflows/${mine}/runs/run_`));
    expect((await send()).headers.get('location')).toBe(location);
    expect(await runStore.countRuns(server.ctx.db, (await userId('runner'))!, mine)).toBe(1);

    const runId = location.split('/').at(-1)!;
    const run = await runStore.findRun(server.ctx.db, runId);
    expect(JSON.parse(run!.inputs)).toEqual({ ticket: '  keeps its spaces  ' });
    // The live fragment says the status in a header until the run ends.
    let state: Response;
    for (;;) {
      state = await browser.fetch(`${location}/state`);
      expect(state.status).toBe(200);
      if (state.headers.get('x-run-status') === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await state.text()).toContain('<h2>Output</h2>');
    const list = await (await browser.fetch('/workflows')).text();
    const row = list.slice(list.indexOf(`href="/workflows/${mine}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('status-completed');
  });

  it('names the empty or missing field of a refused run form (400) and keeps what was typed', async () => {
    const fields = formFields(await (await browser.fetch(`/workflows/${mine}`)).text());
    const res = await browser.post(`/workflows/${mine}/run`, {
      csrf_token: fields.csrf_token!,
      idempotency_key: fields.idempotency_key!,
      input_ticket: '   ',
      unrelated: 'x',
    });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain(
      'id="input_ticket" name="input_ticket" rows="3" required aria-invalid="true" aria-describedby="input_ticket-error"',
    );
    expect(page).toContain('<a class="skip-link" href="#input_ticket">Skip to Run the workflow</a>'); // keyboard order starts at the field to fix
    expect(page).toContain('<p class="field-error" id="input_ticket-error">Enter the ticket.</p>');
  });

  it("another user's workflow, run or live state is a 404, and a run form cannot start their workflow", async () => {
    expect((await browser.fetch(`/workflows/${other}`)).status).toBe(404);
    const { csrf_token } = formFields(await (await browser.fetch('/workflows')).text());
    expect((await browser.post(`/workflows/${other}/run`, { csrf_token: csrf_token!, input_ticket: 'x' })).status).toBe(
      404,
    );
    expect(await runStore.countRuns(server.ctx.db, otherUserId, other)).toBe(0);
    const theirs = new Browser(server.baseUrl);
    await logIn(theirs, 'someone', 'test-password-2', '/workflows');
    const form = formFields(await (await theirs.fetch(`/workflows/${other}`)).text());
    const started = await theirs.post(`/workflows/${other}/run`, { ...form, input_ticket: 'theirs' });
    const location = started.headers.get('location')!;
    expect((await browser.fetch(location)).status).toBe(404);
    expect((await browser.fetch(`${location}/state`)).status).toBe(404);
    const foreignStream = await browser.fetch(`${location}/events`);
    expect(foreignStream.status).toBe(404);
    expect(foreignStream.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await theirs.fetch(location)).status).toBe(200);
    // Theirs to them: the run's events until run.finished, then the stream ends.
    const stream = await theirs.fetch(`${location}/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await stream.text()).toMatch(/^id: 1\nevent: run\.status\n[\s\S]*event: run\.finished\n/);
    expect((await browser.fetch('/workflows/wf_nope')).status).toBe(404);
    expect((await browser.fetch('/workflows?page=abc')).status).toBe(200);
  });
});
