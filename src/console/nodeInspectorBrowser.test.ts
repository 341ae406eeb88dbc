import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import { type DemoSeed } from '../accounts/seed.ts';

// The node inspector in a real browser: a graph box is a link to its node's details (its config on
// the workflow page; on a run's page also the text it worked on, its output and its error), by
// mouse or keyboard, without script for reading; axe clean at desktop and phone widths.

describe('node inspector in a real browser', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  let page: Page;
  const triage = () => seed.workflows.find((w) => w.name === 'Triage')!.id;

  let demo: DemoConsole | undefined;
  beforeAll(async () => {
    demo = await openDemoConsole();
    ({ server, seed, api, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  it('on a workflow page, clicking a node shows its config and edges; the keyboard reaches each node', async () => {
    await page.goto(`${server.baseUrl}/workflows/${triage()}`);
    await page.click('.graph a.node-link[href="#node-is_urgent"]');
    await page.waitForURL((url) => url.hash === '#node-is_urgent');
    const detail = page.locator('#node-is_urgent');
    expect(await detail.evaluate((el) => el.matches(':target') && document.activeElement === el)).toBe(true);
    const text = await detail.textContent();
    for (const part of [
      'left',
      '{{ inputs.ticket | downcase }}',
      'operator',
      'contains',
      'right',
      'urgent',
      'page (when true)',
      'queue (when false)',
    ])
      expect(text).toContain(part);
    // By keyboard: the node links are Tab stops; Enter opens the one focused.
    await page.focus('.graph a.node-link[href="#node-queue"]');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.hash === '#node-queue');
    expect(await page.locator('#node-queue').textContent()).toContain('Queued: {{ inputs.ticket }}');
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      await screenshot(page, `node-inspector-workflow-${device}`);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
  });

  it('on a run page, clicking a node unfolds what it was set to do and the text it worked on, beside its output and error', async () => {
    // A call that fails for good (echo-fail, no retry): its error is shown at the node.
    const { data: failing } = await api.POST('/api/workflows', {
      body: {
        name: 'Always fails',
        nodes: [
          { id: 'question', type: 'text_input', config: { variable: 'question' } },
          {
            id: 'answer',
            type: 'llm_call',
            config: { model: 'echo-fail', prompt: 'Answer: {{ inputs.question }}', retry: { max_attempts: 1 } },
          },
          { id: 'result', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'question', to: 'answer' },
          { from: 'answer', to: 'result' },
        ],
      },
    });
    const workflowId = failing!.data.id;
    const { data: started } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
      body: { inputs: { question: 'why?' } },
    });
    expect(started!.data.status).toBe('failed');
    await page.goto(`${server.baseUrl}/workflows/${workflowId}/runs/${started!.data.id}`);
    await page.click('.graph a.node-link[href="#node-answer"]');
    await page.waitForURL((url) => url.hash === '#node-answer');
    const row = page.locator('tr#node-answer');
    expect(await row.locator('details.step-details').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    const text = await row.textContent();
    expect(text).toContain('echo-fail'); // its config
    expect(text).toContain('Answer: why?'); // the prompt it sent
    expect(text).toContain('The demo model echo-fail failed on purpose (1 of 1 attempts failed).'); // its error
    expect(await row.locator('.badge').textContent()).toBe('failed');
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      await screenshot(page, `node-inspector-run-${device}`);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    expect(await row.locator('.step-attempts').textContent()).toBe('Attempts 1 (calls to the model provider)');
  });

  it("on a run page, a node's attempts: the demo's Flaky call answered on its third, said in its row and its details (issue 35 item 2)", async () => {
    const flaky = seed.workflows.find((w) => w.name === 'Flaky call')!.id;
    const { data: started } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: flaky }, header: { Prefer: 'wait=30' } },
      body: { inputs: { question: 'again?' } },
    });
    expect(started!.data.status).toBe('completed');
    await page.goto(`${server.baseUrl}/workflows/${flaky}/runs/${started!.data.id}`);
    const row = page.locator('tr#node-answer');
    expect(await row.locator('td:nth-child(2)').textContent()).toBe('completedafter 3 attempts');
    await page.focus('.graph a.node-link[href="#node-answer"]');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.hash === '#node-answer');
    expect(await row.locator('.step-attempts').textContent()).toBe(
      'Attempts 3 (2 retries) (calls to the model provider)',
    );
    expect(await page.locator('tr#node-question .step-attempts').count()).toBe(0); // no model, no attempts
    expect(await axeViolations(page)).toEqual([]);
  });
});
