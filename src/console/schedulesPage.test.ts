import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createSchedule } from '../schedules/service.ts';
import { createWorkflow } from '../workflows/service.ts';
import { createUser } from '../accounts/users.ts';

// The workflow page lists the workflow's schedules, read-only: cron and zone,
// the version it runs, the next tick, and how the last one went; and says where they are changed.

describe.each(testDialects())('schedules on the workflow page (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let userId: number;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: { worker: false } });
    userId = (await createUser(server.ctx, { login: 'planner', password: 'test-password-1' })).id;
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'planner', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  it('lists each schedule with its cron, zone, version, next tick and last tick', async () => {
    const workflow = await createWorkflow(server.ctx, userId, { name: 'Nightly', ...seedGraph('echo') });
    const pinned = await createSchedule(server.ctx, userId, workflow.id, {
      cron: '30 2 * * *',
      timezone: 'Europe/Paris',
      inputs: { ticket: 'x' },
      version: 1,
    });
    await createSchedule(server.ctx, userId, workflow.id, {
      cron: '0 9 * * 1',
      inputs: { ticket: 'y' },
      enabled: false,
    });
    const page = await (await browser.fetch(`/workflows/${workflow.id}`)).text();
    expect(page).toContain('<h2 id="schedules-heading">Schedules</h2>');
    expect(page).toContain('<code>30 2 * * *</code><br><small>Europe/Paris</small>');
    expect(page).toContain('<td>version 1</td>');
    expect(page).toContain(`${pinned.next_run_at!.slice(0, 16).replace('T', ' ')} UTC`);
    expect(page).toContain(
      '<code>0 9 * * 1</code><br><small>UTC</small></td>\n<td>current</td>\n<td>disabled</td><td>never</td>',
    );
    expect(page).toContain('<code>createSchedule</code>');
  });

  it('says so when the workflow has none', async () => {
    const workflow = await createWorkflow(server.ctx, userId, { name: 'Manual', ...seedGraph('echo') });
    expect(await (await browser.fetch(`/workflows/${workflow.id}`)).text()).toContain('<p>No schedules.</p>');
  });
});
