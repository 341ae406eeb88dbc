import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../client/src/index.ts';
import { logInPage, SCREEN_WIDTHS } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import { compareScreenshot } from '../../test/support/visual.ts';
import { DEMO, type DemoSeed } from '../accounts/seed.ts';

// Screenshot tests of the console against reviewed images (test/screenshots/, test/support/visual.ts):
// the workflow editor, a run that took a branch, and the phone layout. Ids and dates are masked.

describe('console screenshots against the reviewed images', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let page: Page;
  const triage = () => seed.workflows.find((w) => w.name === 'Triage')!.id;
  /** What differs from run to run (ids, dates, durations), by page: masked, never hidden elements (a mask of one lands elsewhere). */
  const CHANGING = {
    run: 'h1 code, .crumbs + h1 + p small, .facts dd, tr.step td:nth-child(3), .tl-summary, .tl-track, .tl-took, .tl-flag',
    workflow:
      'section[aria-labelledby=graph-heading] > p:first-of-type small, table.runs td:nth-child(1) code, table.runs td:nth-child(2), table.runs td:nth-child(3), [data-totals] dd, code[data-copy="MCP URL"]',
    list: 'table.workflows td:nth-child(3) small, table.workflows td:nth-child(4) small',
  };
  const changing = (what: keyof typeof CHANGING) => [page.locator(CHANGING[what])];

  let demo: DemoConsole | undefined;
  beforeAll(async () => {
    demo = await openDemoConsole();
    ({ server, seed, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  it('the workflow editor (desktop), as it reads without script', async () => {
    // Without script: the builder's forms are generated from the contract's node schemas, which
    // change as node types grow; the page as served shows the demo graph alone.
    // (The builder is proven in workflowBuilderBrowser.test.ts, its pictures kept in artifacts/e2e/.)
    const context = await demo!.browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: SCREEN_WIDTHS.desktop, height: 800 },
    });
    const noScript = await context.newPage();
    await logInPage(noScript, server.baseUrl, DEMO.login, DEMO.password, '/workflows');
    await noScript.goto(`${server.baseUrl}/workflows/${triage()}/edit`);
    expect(await compareScreenshot(noScript, 'editor-desktop')).toBeUndefined();
    await context.close();
  });

  it('a run that took a branch (desktop)', async () => {
    const api = createApiClient(server.baseUrl, { bearer: seed.apiKey.token });
    const { data } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: triage() }, header: { Prefer: 'wait=20' } },
      body: { inputs: { ticket: 'URGENT: the site is down' } },
    });
    expect(data!.data.status).toBe('completed');
    await page.goto(`${server.baseUrl}/workflows/${triage()}/runs/${data!.data.id}`);
    expect(await compareScreenshot(page, 'run-branch-desktop', changing('run'))).toBeUndefined();
  });

  it('the phone layout: the workflow list and a workflow', async () => {
    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 800 });
    await page.goto(`${server.baseUrl}/workflows`);
    expect(await compareScreenshot(page, 'workflows-phone', changing('list'))).toBeUndefined();
    await page.goto(`${server.baseUrl}/workflows/${triage()}`);
    expect(await compareScreenshot(page, 'workflow-phone', changing('workflow'))).toBeUndefined();
  });
});
