import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { createWorkflow } from '../workflows/service.ts';

// Monthly budgets in the console: the workflow page's section and an access token's budget page
// show this month's spend against the limit, and set or remove it with CSRF-checked forms that
// refuse a malformed amount at its field; another user's workflow or key is not found.

const PRICES = JSON.stringify({ 'gpt-x': { input: 1, output: 2, currency: 'EUR' } });

describe.each(testDialects())('monthly budgets in the console (%s)', (dialect) => {
  let server: TestServer;
  let owner: Browser;
  let other: Browser;
  let userId: number;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: { worker: false }, env: { MODEL_PRICES: PRICES } });
    userId = (await createUser(server.ctx, { login: 'spender', password: 'test-password-1' })).id;
    await createUser(server.ctx, { login: 'onlooker', password: 'test-password-1' });
    owner = new Browser(server.baseUrl);
    other = new Browser(server.baseUrl);
    expect((await logIn(owner, 'spender', 'test-password-1', '/workflows')).status).toBe(303);
    expect((await logIn(other, 'onlooker', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  const csrfOf = async (browser: Browser, path: string) =>
    formFields(await (await browser.fetch(path)).text()).csrf_token!;

  it("sets, shows and removes a workflow's budget from its page; a malformed amount is refused at its field", async () => {
    const workflow = await createWorkflow(server.ctx, userId, { name: 'Costly', ...seedGraph('echo') });
    const page = `/workflows/${workflow.id}`;
    const before = await (await owner.fetch(page)).text();
    expect(before).toContain('<h2 id="budget-heading">Monthly budget</h2>');
    expect(before).toContain('No monthly budget');
    expect(before).toContain(`action="/workflows/${workflow.id}/budget"`);
    expect(before).toContain('Monthly limit (EUR)');

    // Without the CSRF token: 403; another user's session: 404. Neither sets anything.
    expect((await owner.post(`${page}/budget`, { monthly_limit: '5' })).status).toBe(403);
    const theirs = await csrfOf(other, '/workflows');
    expect((await other.post(`${page}/budget`, { csrf_token: theirs, monthly_limit: '5' })).status).toBe(404);
    expect((await other.fetch(`${page}/budget`)).status).toBe(404);

    const csrf = formFields(before).csrf_token!;
    for (const bad of ['abc', '0', '-3', '1e3', '10000000000', '1.0000000001']) {
      const refused = await owner.post(`${page}/budget`, { csrf_token: csrf, monthly_limit: bad });
      expect(refused.status, bad).toBe(400);
      const text = await refused.text();
      expect(text).toContain('id="monthly_limit-error"');
      expect(text).toContain('aria-invalid="true"');
    }
    expect(await server.ctx.db('budgets').where({ target_id: workflow.id }).first()).toBeUndefined();

    const set = await owner.post(`${page}/budget`, { csrf_token: csrf, monthly_limit: '12.5' });
    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe(`${page}?done=budget-set#budget-heading`);
    // A run of this month that cost 13 EUR: spent, and the page says new runs are refused.
    const now = Date.now();
    await server.ctx.db('runs').insert({
      id: 'run_budgetconsole1',
      workflow_id: workflow.id,
      user_id: userId,
      status: 'completed',
      inputs: '{}',
      graph: '{}',
      attempts: 1,
      created_at: now,
      cost_nanos: 13_000_000_000,
      cost_currency: 'EUR',
    });
    const after = await (await owner.fetch(`${page}?done=budget-set`)).text();
    expect(after).toContain('Monthly budget set.');
    expect(after).toMatch(/Spent <strong class="expired">13<\/strong> of 12\.5 EUR this month/);
    expect(after).toContain('new runs are refused until it resets');

    const removed = await owner.post(`${page}/budget/delete`, { csrf_token: csrf });
    expect(removed.status).toBe(303);
    expect(removed.headers.get('location')).toBe(`${page}?done=budget-removed#budget-heading`);
    expect(await (await owner.fetch(page)).text()).toContain('No monthly budget');
  });

  it("sets an access token's budget from the access-token page, which shows it; another user's token is not found", async () => {
    const { record } = await createAccessToken(server.ctx, {
      userId,
      namespace: 'spender',
      name: 'ci-key',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    const list = await (await owner.fetch('/settings/tokens')).text();
    expect(list).toContain(`href="/settings/tokens/${record.id}/budget"`);
    const budgetPage = await (await owner.fetch(`/settings/tokens/${record.id}/budget`)).text();
    expect(budgetPage).toContain('Monthly budget of the key ci-key');
    expect(budgetPage).toContain('No monthly budget');

    const theirs = await csrfOf(other, '/settings/tokens');
    expect((await other.fetch(`/settings/tokens/${record.id}/budget`)).status).toBe(404);
    expect(
      (await other.post(`/settings/tokens/${record.id}/budget`, { csrf_token: theirs, monthly_limit: '1' })).status,
    ).toBe(404);

    const set = await owner.post(`/settings/tokens/${record.id}/budget`, {
      csrf_token: formFields(budgetPage).csrf_token!,
      monthly_limit: '3',
    });
    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe('/settings/tokens?done=budget-set');
    const shown = await (await owner.fetch('/settings/tokens?done=budget-set')).text();
    expect(shown).toContain('Monthly budget set.');
    expect(shown).toMatch(/Spent 0 of 3 EUR this month/);
  });
});
