// A run's timeline in a real browser: a real run (server, store, queue, worker) of the approval
// example whose model answers 500 once, so its draft node is retried and its review waits for an
// answer. The page shows the retry's wait and the approval's wait, passes axe, fits a phone, and
// follows the run live: answered through the API, the timeline gains the nodes that ran after it.
// A price table prices the model, so the page shows the draft's and the run's cost.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { launchChromium, logInPage, SCREEN_WIDTHS, screenshot, scrollsSideways } from '../../test/support/chromium.ts';
import { replyGate, startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { approvalExample, waitingEvent } from '../../test/support/approvals.ts';

describe('run timeline in a real browser', () => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let api: ApiClient;
  let token: string;
  let workflowId: string;
  const errors: string[] = [];
  const PASSWORD = 'correct horse battery';

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      runs: true,
      env: {
        MODEL_PROVIDER_BASE_URL: fake.baseUrl,
        MODEL_PROVIDER_MODELS: 'gpt-4o-mini',
        MODEL_PRICES: JSON.stringify({ 'gpt-4o-mini': { input: 150, output: 600 } }),
      },
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
    workflowId = (await api.POST('/api/workflows', { body: approvalExample() })).data!.data.id;
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await logInPage(page, server.baseUrl, 'alice', PASSWORD, '/workflows');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  it('shows the retried draft and the waiting review, passes axe, fits a phone, and follows the run to its end', async () => {
    fake.replies = [
      { kind: 'error', status: 500, message: 'The server had an error while processing your request.' },
      { kind: 'completion', content: 'Sorry! Refunded.' },
    ];
    const { data } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId } },
      body: { inputs: { ticket: 'Charged twice' } },
    });
    const runId = data!.data.id;
    await waitingEvent(server.baseUrl, token, workflowId, runId);

    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    await page.goto(`${server.baseUrl}/workflows/${workflowId}/runs/${runId}`);
    expect(await page.textContent('#run-status')).toBe('waiting');
    const draft = page.locator('[data-timeline-row="draft"]');
    expect(await draft.locator('[data-segment="retry"]').count()).toBe(1);
    expect(await draft.locator('[data-segment="running"]').count()).toBe(2);
    expect(await draft.textContent()).toContain('2 attempts');
    expect(await page.locator('[data-timeline-row="review"] [data-segment="waiting"]').count()).toBe(1);
    expect(await page.locator('[data-timeline-row="run"] [data-segment="waiting"]').count()).toBe(1);
    // Drawn: each bar has the width its time gives it (inline styles, which the CSP allows).
    // (Read in one step in the page: the live page may swap the timeline for a fresh copy meanwhile.)
    const width = await page.evaluate(
      () => document.querySelector('[data-timeline-row="draft"] [data-segment="retry"]')!.getBoundingClientRect().width,
    );
    expect(width).toBeGreaterThan(0);
    expect(await axeViolations(page)).toEqual([]);
    await page.click('.tl-times summary');
    expect(await page.isVisible('[data-timeline-times="draft"]')).toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 800 });
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, 'run-timeline-phone');

    // Answered elsewhere while the page is open: it follows, and the nodes after the review get their bars.
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    const approved = await api.POST('/api/workflows/{workflow_id}/runs/{run_id}/resume', {
      params: { path: { workflow_id: workflowId, run_id: runId } },
      body: { answer: { approved: true } },
    });
    expect(approved.response.status).toBeLessThan(300);
    await page.waitForFunction(() => document.querySelector('#run-status')?.textContent === 'completed');
    await page.waitForSelector('[data-timeline-row="result"] [data-segment="running"]', { state: 'attached' });
    expect(await page.locator('[data-timeline-row="review"] [data-segment="waiting"]').count()).toBe(1);
    expect(await page.locator('[data-timeline-row="hold"]').textContent()).toContain('skipped');
    // Priced: the draft's cost beside its tokens, and the run's once it ended (read with the state at its end).
    expect(await page.textContent('[data-step="draft"] [data-field="cost"]')).toMatch(/^\$0\.\d+$/);
    await page.waitForFunction(() => document.querySelector('#run-cost')?.textContent?.startsWith('$'));
    await screenshot(page, 'run-timeline-desktop');
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('follows a running node to its end: a bar while it runs, then a completed bar and its cost beside its tokens', async () => {
    const gate = replyGate();
    fake.replies = [{ kind: 'completion', content: 'Done.', until: gate.held }];
    const seeded = await api.POST('/api/workflows', {
      body: { name: 'One call', ...seedGraph('gpt-4o-mini') },
    });
    const id = seeded.data!.data.id;
    const { data } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: id } },
      body: { inputs: { ticket: 'Hello' } },
    });
    const runId = data!.data.id;
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    await page.goto(`${server.baseUrl}/workflows/${id}/runs/${runId}`);
    await page.waitForFunction(
      () => document.querySelector('[data-timeline-row="summarise"] [data-segment="running"]') !== null,
    );
    gate.release();
    await page.waitForFunction(() =>
      document.querySelector('[data-step="summarise"] [data-field="cost"]')?.textContent?.startsWith('$'),
    );
    await page.waitForFunction(() => document.querySelector('#run-status')?.textContent === 'completed');
    await page.waitForFunction(
      () => document.querySelector('[data-timeline-row="summarise"] .tl-running.status-completed') !== null,
    );
    expect(await page.textContent('#run-cost')).toMatch(/^\$0\.\d+ \(/);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
