import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createCallback } from '../hooks/callbacks.ts';
import { createWorkflow } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';

// The workflow page lists the workflow's callbacks and whether deliveries go out to each: a
// paused one (its deliveries kept failing) says when and why, with a Re-enable button for its
// owner only. How a callback comes to be paused is proven in src/hooks/callbackFairness.test.ts;
// here its row is set paused directly.

describe.each(testDialects())('callbacks on the workflow page (%s)', (dialect) => {
  let server: TestServer;
  let owner: Browser;
  let other: Browser;
  let userId: number;

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      runs: { worker: false },
      env: { WORKFLOW_HTTP_ALLOW_HOSTS: 'localhost' },
    });
    userId = (await createUser(server.ctx, { login: 'hooker', password: 'test-password-1' })).id;
    await createUser(server.ctx, { login: 'stranger', password: 'test-password-1' });
    owner = new Browser(server.baseUrl);
    other = new Browser(server.baseUrl);
    expect((await logIn(owner, 'hooker', 'test-password-1', '/workflows')).status).toBe(303);
    expect((await logIn(other, 'stranger', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  it('shows a paused callback with when and why, and its owner re-enables it with the button; another user gets 404', async () => {
    const workflow = await createWorkflow(server.ctx, userId, { name: 'Hooked', ...seedGraph('echo') });
    const active = await createCallback(server.ctx, userId, workflow.id, {
      url: 'http://localhost:9/fine',
      description: 'Fine one',
    });
    const paused = await createCallback(server.ctx, userId, workflow.id, { url: 'http://localhost:9/down' });
    await server.ctx
      .db('workflow_callbacks')
      .where({ id: paused.id })
      .update({
        status: 'paused',
        paused_at: Date.parse('2026-11-27T10:00:00Z'),
        disabled_reason:
          '20 consecutive failed attempts since 2026-11-26T10:00:00.000Z; the last: The endpoint answered 500.',
      });

    const page = await (await owner.fetch(`/workflows/${workflow.id}`)).text();
    expect(page).toContain('<h2 id="callbacks-heading">Callbacks</h2>');
    expect(page).toContain(
      `<tr><td><code>http://localhost:9/fine</code><br><small>Fine one</small></td><td>active</td></tr>`,
    );
    expect(page).toContain(
      '<strong>paused</strong> since 2026-11-27 10:00 UTC<br><small>20 consecutive failed attempts since 2026-11-26T10:00:00.000Z; the last: The endpoint answered 500.</small>',
    );
    expect(page).toContain(`action="/workflows/${workflow.id}/callbacks/${paused.id}/enable"`);
    expect(page).not.toContain(`/callbacks/${active.id}/enable`);

    // Without the CSRF token: 403. Another user's session: 404. Both leave it paused.
    expect((await owner.post(`/workflows/${workflow.id}/callbacks/${paused.id}/enable`, {})).status).toBe(403);
    const { csrf_token: theirs } = formFields(await (await other.fetch('/workflows')).text());
    expect(
      (await other.post(`/workflows/${workflow.id}/callbacks/${paused.id}/enable`, { csrf_token: theirs! })).status,
    ).toBe(404);
    expect((await server.ctx.db('workflow_callbacks').where({ id: paused.id }).first()).status).toBe('paused');

    const res = await owner.post(`/workflows/${workflow.id}/callbacks/${paused.id}/enable`, {
      csrf_token: formFields(page).csrf_token!,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/workflows/${workflow.id}?done=callback-enabled#callbacks-heading`);
    const after = await (await owner.fetch(`/workflows/${workflow.id}?done=callback-enabled`)).text();
    expect(after).toContain('Callback re-enabled.');
    expect(after).not.toContain('<strong>paused</strong>');
    expect((await server.ctx.db('workflow_callbacks').where({ id: paused.id }).first()).status).toBe('active');
  });

  it('has no callbacks section when the workflow has none', async () => {
    const workflow = await createWorkflow(server.ctx, userId, { name: 'Quiet', ...seedGraph('echo') });
    const page = await (await owner.fetch(`/workflows/${workflow.id}`)).text();
    expect(page).toContain('<h2 id="schedules-heading">Schedules</h2>');
    expect(page).not.toContain('callbacks-heading');
  });
});
