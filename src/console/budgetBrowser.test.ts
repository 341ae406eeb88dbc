import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, logInPage, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { createFixture } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createWorkflow } from '../workflows/service.ts';

// Monthly budgets in a real browser, at desktop and phone widths: the workflow page's section (a
// spent budget) and an access token's budget page with a refused amount are axe clean, fit a
// phone, and name the refused field for assistive technology.

describe('monthly budgets in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let workflowId: string;
  let tokenId: number;

  beforeAll(async () => {
    server = await startTestServer({
      runs: { worker: false },
      env: { MODEL_PRICES: JSON.stringify({ 'gpt-x': { input: 1, output: 2, currency: 'USD' } }) },
    });
    const f = await createFixture(server.ctx.db);
    workflowId = (await createWorkflow(server.ctx, f.userId, { name: 'Costly', ...seedGraph('echo') })).id;
    tokenId = (
      await createAccessToken(server.ctx, {
        userId: f.userId,
        name: 'deploy bot',
        namespace: f.login,
        usageScenario: 'paid',
        permissions: ['workflows'],
      })
    ).record.id;
    await server.ctx.db('budgets').insert({
      user_id: f.userId,
      scope: 'workflow',
      target_id: workflowId,
      limit_nanos: 1_000_000_000,
      currency: 'USD',
      created_at: Date.now(),
      updated_at: Date.now(),
    });
    await server.ctx.db('runs').insert({
      id: 'run_budgetbrowser1',
      workflow_id: workflowId,
      user_id: f.userId,
      status: 'completed',
      inputs: '{}',
      graph: '{}',
      attempts: 1,
      created_at: Date.now(),
      cost_nanos: 1_500_000_000,
      cost_currency: 'USD',
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: 800 } });
    await logInPage(page, server.baseUrl, f.login, f.password);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("a workflow page's spent budget and a key's budget page: axe clean, no sideways scrolling; a refused amount is named at its field", async () => {
    for (const width of Object.values(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.baseUrl}/workflows/${workflowId}`);
      await expect.poll(() => page.locator('#budget-heading').count()).toBe(1);
      expect(await page.locator('[data-field=budget]').textContent()).toContain('Spent 1.5 of 1 USD this month');
      expect(await scrollsSideways(page), `workflow page at ${width}px`).toBe(false);
      expect(await axeViolations(page), `workflow page at ${width}px`).toEqual([]);

      await page.goto(`${server.baseUrl}/settings/tokens/${tokenId}/budget`);
      await page.fill('#monthly_limit', '-2');
      await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit].primary')]);
      expect(await page.locator('#monthly_limit').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#monthly_limit').getAttribute('aria-describedby')).toBe('monthly_limit-error');
      expect(await scrollsSideways(page), `key budget page at ${width}px`).toBe(false);
      expect(await axeViolations(page), `key budget page at ${width}px`).toEqual([]);
    }
  });
});
