import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, logInPage, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { createFixture } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createWorkflow, getWorkflow } from '../workflows/service.ts';

// The workflow page's "Use from an AI assistant" section in a real browser, at desktop and phone
// widths: axe clean, no sideways scrolling, the MCP URL and a one-line client configuration shown,
// and its button (a CSRF-checked form post) exposing the workflow as a tool and back.

describe('"Use from an AI assistant" in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let userId: number;
  let workflowId: string;

  beforeAll(async () => {
    server = await startTestServer({ runs: { worker: false } });
    const f = await createFixture(server.ctx.db);
    userId = f.userId;
    workflowId = (await createWorkflow(server.ctx, f.userId, { name: 'Assistant tool', ...seedGraph('echo') })).id;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: 800 } });
    await logInPage(page, server.baseUrl, f.login, f.password);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the MCP URL and a one-line config, toggles the tool, and is axe clean and phone-fit both ways', async () => {
    const mcpUrl = `${server.baseUrl}/mcp`;
    for (const exposed of [false, true]) {
      for (const width of Object.values(SCREEN_WIDTHS)) {
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${server.baseUrl}/workflows/${workflowId}`);
        await expect.poll(() => page.locator('#mcp-heading').count()).toBe(1);
        expect(await page.locator('#mcp-heading').textContent()).toBe('Use from an AI assistant');
        expect(await page.locator('code[data-copy="MCP URL"]').textContent()).toBe(mcpUrl);
        const config = await page.locator('code[data-copy="MCP client configuration"]').textContent();
        expect(config).not.toContain('\n');
        // Registration is off here (the default): the client needs a token the user got.
        expect(JSON.parse(config!)).toEqual({
          mcpServers: {
            workflows: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer YOUR_OAUTH_ACCESS_TOKEN' } },
          },
        });
        expect(await page.locator('[data-field=mcp-tool]').textContent()).toContain(
          exposed ? 'is a tool of your MCP server' : 'is not a tool',
        );
        expect(await scrollsSideways(page), `workflow page at ${width}px`).toBe(false);
        expect(await axeViolations(page), `workflow page at ${width}px`).toEqual([]);
      }
      await Promise.all([page.waitForURL(/done=mcp-tool-/), page.click('#mcp-tool-toggle')]);
      expect(page.url()).toContain(exposed ? 'done=mcp-tool-off' : 'done=mcp-tool-on');
      expect((await getWorkflow(server.ctx, userId, workflowId)).mcp_tool).toBe(!exposed);
    }
    // Back where it began: not a tool.
    expect((await getWorkflow(server.ctx, userId, workflowId)).mcp_tool).toBe(false);
  });

  it("refuses the toggle without the form's CSRF token, and answers 404 for a workflow that is not the user's", async () => {
    const post = (path: string, fields: Record<string, string>) =>
      page.evaluate(async ([p, body]) => (await fetch(p, { method: 'POST', body: new URLSearchParams(body) })).status, [
        path,
        fields,
      ] as const);
    expect(await post(`/workflows/${workflowId}/mcp-tool`, { mcp_tool: 'true' })).toBe(403);
    expect((await getWorkflow(server.ctx, userId, workflowId)).mcp_tool).toBe(false);
    await page.goto(`${server.baseUrl}/workflows/${workflowId}`);
    const csrf = await page.locator('input[name=csrf_token]').first().inputValue();
    expect(await post('/workflows/wf_someone_elses/mcp-tool', { mcp_tool: 'true', csrf_token: csrf })).toBe(404);
  });
});
