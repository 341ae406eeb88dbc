// An approval node's pages in a real browser: the reviewer's single-use link (no account) and the
// owner's run page, each with the node's message and a form built from its answer_schema; the run
// goes on from the answer sent there. Real server, store, queue and worker; a local provider
// speaking OpenAI's wire format drafts the reply that waits for approval.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { launchChromium, logInPage, SCREEN_WIDTHS, screenshot, scrollsSideways } from '../../test/support/chromium.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { approvalExample, waitingEvent } from '../../test/support/approvals.ts';

type RunDetail = Schemas['RunDetail'];

describe('approval pages in a real browser', () => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let api: ApiClient;
  let token: string;
  let workflowId: string;
  const PASSWORD = 'correct horse battery';

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.answer = () => ({ kind: 'completion', content: 'Sorry! Refunded.' });
    server = await startTestServer({
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'gpt-4o-mini' },
    });
    const user = await createUser(server.ctx, { login: 'alice', password: PASSWORD });
    ({ token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'alice',
      name: 'runs',
      usageScenario: 'paid',
      permissions: ['workflows'],
    }));
    api = createApiClient(server.baseUrl, { bearer: token });
    const created = await api.POST('/api/workflows', { body: approvalExample() });
    workflowId = created.data!.data.id;
    browser = await launchChromium();
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  /** Starts the example and reads its node.waiting event (the run is then `waiting`). */
  async function waitingRun(): Promise<{ runId: string; approvalUrl: string }> {
    const { data } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    const runId = data!.data.id;
    const event = await waitingEvent(server.baseUrl, token, workflowId, runId);
    return { runId, approvalUrl: event.approval_url };
  }

  async function endedRun(runId: string): Promise<RunDetail> {
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: workflowId, run_id: runId }, header: { Prefer: 'wait=20' } },
    });
    return data!.data;
  }

  it("the reviewer's link shows the message and the answer form, fits a phone, and its answer lets the run go on", async () => {
    const { runId, approvalUrl } = await waitingRun();
    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 800 });
    await page.goto(approvalUrl);
    expect(await page.textContent('.approval-message')).toContain('Sorry! Refunded.');
    expect(await axeViolations(page)).toEqual([]);
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, 'approval-link-phone');
    await page.selectOption('#answer-approved', 'false');
    await page.fill('#answer-note', 'Too curt');
    await page.click('#answer button[type=submit]');
    expect(await page.textContent('h1')).toBe('Answer sent');
    expect(await endedRun(runId)).toMatchObject({ status: 'completed', output: { result: 'Held back: Too curt' } });

    // The link works once: opened again, it says so (409), and offers no form.
    const again = await page.goto(approvalUrl);
    expect(again!.status()).toBe(409);
    expect(await page.locator('form#answer').count()).toBe(0);
  });

  it("the owner's run page shows a waiting run's form; its answer resumes the run", async () => {
    const { runId } = await waitingRun();
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    await logInPage(page, server.baseUrl, 'alice', PASSWORD);
    await page.goto(`${server.baseUrl}/workflows/${workflowId}/runs/${runId}`);
    expect(await page.textContent('#run-status')).toBe('waiting');
    const form = page.locator('form[data-approval-form]');
    expect(await form.count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await form.locator('select[name=approved]').selectOption('true');
    await form.locator('button[type=submit]').click();
    await page.waitForLoadState('load');
    expect(await endedRun(runId)).toMatchObject({ status: 'completed', output: { result: 'Sent: Sorry! Refunded.' } });
  });
});
