import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { startRun } from '../runs/service.ts';
import * as runStore from '../runs/store.ts';
import { createWorkflow, getWorkflow, updateWorkflow } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';

// The console's Delete workflow: a confirmation page first; confirming posts
// its CSRF token and the version it showed, which deletes that version only (If-Match): a save in
// between deletes nothing and says so. Runs in flight are cancelled, as the API's delete does.

describe.each(testDialects())('deleting a workflow in the console (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let userId: number;

  beforeAll(async () => {
    // No worker: a started run stays queued until the delete cancels it.
    server = await startTestServer({ dialect, runs: { worker: false } });
    userId = (await createUser(server.ctx, { login: 'deleter', password: 'test-password-1' })).id;
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'deleter', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  const make = (name: string) => createWorkflow(server.ctx, userId, { name, ...seedGraph('echo') });
  const exists = (id: string) =>
    getWorkflow(server.ctx, userId, id).then(
      () => true,
      () => false,
    );

  it('links the workflow page to a confirmation naming the version; without the CSRF token nothing is deleted (403)', async () => {
    const workflow = await make('Kept');
    const page = await (await browser.fetch(`/workflows/${workflow.id}`)).text();
    expect(page).toContain(
      `<a class="button danger" href="/workflows/${workflow.id}/delete" id="delete-workflow">Delete workflow</a>`,
    );
    const confirm = await browser.fetch(`/workflows/${workflow.id}/delete`);
    expect(confirm.status).toBe(200);
    const text = await confirm.text();
    expect(text).toContain('Version 1 of this workflow');
    expect(formFields(text).version).toBe('1');
    expect((await browser.post(`/workflows/${workflow.id}/delete`, { version: '1' })).status).toBe(403);
    expect(await exists(workflow.id)).toBe(true);
  });

  it('deletes the confirmed version and cancels its queued run, then lists the workflows with a message', async () => {
    const workflow = await make('Doomed');
    const { run } = await startRun(server.ctx, userId, workflow.id, { ticket: 'hi' }, undefined);
    const fields = formFields(await (await browser.fetch(`/workflows/${workflow.id}/delete`)).text());
    const res = await browser.post(`/workflows/${workflow.id}/delete`, {
      csrf_token: fields.csrf_token!,
      version: fields.version!,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/workflows?done=workflow-deleted');
    expect(await exists(workflow.id)).toBe(false);
    // Read from the store: through the API a deleted workflow's runs are 404 (no retention by default).
    expect((await runStore.findRun(server.ctx.db, run.id))!.status).toBe('cancelled');
    expect(await (await browser.fetch('/workflows?done=workflow-deleted')).text()).toContain('Workflow deleted.');
  });

  it('deletes nothing when the workflow was saved after the confirmation was shown (If-Match), and says so (409)', async () => {
    const workflow = await make('Moving');
    const fields = formFields(await (await browser.fetch(`/workflows/${workflow.id}/delete`)).text());
    await updateWorkflow(server.ctx, userId, workflow.id, { name: 'Moved' }, undefined);
    const stale = await browser.post(`/workflows/${workflow.id}/delete`, {
      csrf_token: fields.csrf_token!,
      version: fields.version!,
    });
    expect(stale.status).toBe(409);
    const text = await stale.text();
    expect(text).toContain('it is now version 2; you confirmed version 1');
    expect(await exists(workflow.id)).toBe(true);
    // The page asks again about the current version; confirming that deletes it.
    expect(formFields(text).version).toBe('2');
    expect(
      (await browser.post(`/workflows/${workflow.id}/delete`, { csrf_token: fields.csrf_token!, version: '2' })).status,
    ).toBe(303);
    expect(await exists(workflow.id)).toBe(false);
  });

  it("is a 404 for another user's workflow, which stays", async () => {
    const other = await createUser(server.ctx, { login: 'bystander', password: 'test-password-2' });
    const theirs = await createWorkflow(server.ctx, other.id, { name: 'Theirs', ...seedGraph('echo') });
    const { csrf_token } = formFields(await (await browser.fetch('/workflows')).text());
    expect((await browser.fetch(`/workflows/${theirs.id}/delete`)).status).toBe(404);
    expect(
      (await browser.post(`/workflows/${theirs.id}/delete`, { csrf_token: csrf_token!, version: '1' })).status,
    ).toBe(404);
    expect(await getWorkflow(server.ctx, other.id, theirs.id)).toMatchObject({ name: 'Theirs' });
  });
});
