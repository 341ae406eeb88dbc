import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { logInPage, screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import { DEMO, type DemoSeed } from '../accounts/seed.ts';

// The workflow editor in a real browser (server-rendered forms: creating works with script off):
// create a workflow, edit its graph as JSON (what the API takes, round-tripped), see the API's
// 422 problems at the node and field they point to, and a save that lost a race said as a conflict.

describe('workflow editor in a real browser', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  let page: Page;

  let demo: DemoConsole | undefined;
  beforeAll(async () => {
    demo = await openDemoConsole({ height: 900 });
    ({ server, seed, api, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  let created = '';

  it('creates a workflow from the starter graph, with script off; its JSON comes back in the editor exactly as the API has it', async () => {
    const noScript = await (await demo!.browser.newContext({ javaScriptEnabled: false })).newPage();
    await logInPage(noScript, server.baseUrl, DEMO.login, DEMO.password, '/workflows');
    await noScript.click('#new-workflow');
    await noScript.fill('#name', 'Made in the browser');
    await noScript.click('#save-workflow');
    await noScript.waitForURL(/\/workflows\/wf_/);
    const id = (created = /^\/workflows\/(wf_\w+)$/.exec(new URL(noScript.url()).pathname)![1]!);
    expect(await noScript.locator('.graph svg g.node').count()).toBe(3);
    await noScript.close();
    await page.goto(`${server.baseUrl}/workflows/${id}`);
    const { data } = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
    expect(data!.data).toMatchObject({ name: 'Made in the browser', version: 1 });
    await page.click('#edit-workflow');
    expect(JSON.parse(await page.inputValue('#graph'))).toEqual({ nodes: data!.data.nodes, edges: data!.data.edges });
  });

  it('shows every problem the API would answer (422) at its node and field, marks the node in the preview, and saves nothing', async () => {
    await page.goto(`${server.baseUrl}/workflows/${created}/edit`);
    const graph = JSON.parse(await page.inputValue('#graph')) as {
      nodes: { id: string; config: Record<string, unknown> }[];
      edges: unknown[];
    };
    graph.nodes.find((n) => n.id === 'answer')!.config.model = 'gpt-9';
    graph.edges.push({ from: 'result', to: 'nowhere' });
    await page.fill('#graph', JSON.stringify(graph, null, 2));
    await page.click('#save-workflow');
    await page.waitForSelector('ul.problems');
    const problems = await page.locator('ul.problems li').allTextContents();
    expect(problems.some((p) => p.startsWith('Node "answer", config.model: unknown model "gpt-9"'))).toBe(true);
    expect(problems.some((p) => /^Edge 3 \(result → nowhere\)/.test(p))).toBe(true);
    expect(await page.getAttribute('#graph', 'aria-invalid')).toBe('true');
    expect(await page.locator('.graph g.node[data-node=answer]').getAttribute('class')).toContain('status-failed');
    expect(JSON.parse(await page.inputValue('#graph'))).toEqual(graph); // the text as written, kept
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 900 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      await screenshot(page, `workflow-editor-problems-${device}`);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    // Not JSON at all: said at the graph.
    await page.fill('#graph', '{"nodes": [');
    await page.click('#save-workflow');
    expect(await page.locator('ul.problems li').first().textContent()).toMatch(/^The graph: is not JSON/);
    const listed = await api.GET('/api/workflows', { params: { query: { search: 'Made in the browser' } } });
    expect(listed.data!.data[0]!.version).toBe(1);
  });

  it('a save that lost a race to another (If-Match) is a conflict, said as such and not saved; saving again then replaces that version', async () => {
    const triage = seed.workflows.find((w) => w.name === 'Triage')!.id;
    await page.goto(`${server.baseUrl}/workflows/${triage}/edit`);
    await page.fill('#description', 'Mine');
    // Meanwhile, through the API:
    const current = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: triage } } });
    await api.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: triage }, header: { 'If-Match': current.response.headers.get('etag')! } },
      body: { description: 'Theirs' },
    });
    await page.click('#save-workflow');
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).toContain(
      'Not saved: someone else saved this workflow meanwhile (it is now version 2; you started from version 1)',
    );
    expect(await page.inputValue('#description')).toBe('Mine');
    expect(
      (await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: triage } } })).data!.data
        .description,
    ).toBe('Theirs');
    await page.click('#save-workflow');
    await page.waitForURL((url) => url.searchParams.get('done') === 'workflow-saved');
    expect(await page.textContent('[role=status]')).toMatch(/^Workflow saved\./);
    expect(
      (await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: triage } } })).data!.data,
    ).toMatchObject({ description: 'Mine', version: 3 });
  });
});
