import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import { type DemoSeed } from '../accounts/seed.ts';

// Run controls in a real browser, on the demo data with the demo models (the queue and worker are
// real): cancel a slow run, retry it (the API's retryRun: same inputs, same version, resumed), run again with edited inputs,
// filter the history by status and run id, and start a run with the copied curl command.

/** Runs a command in a shell (asynchronously: the service under test answers in this process). */
async function shell(command: string, env: Record<string, string>): Promise<unknown> {
  const { stdout } = await promisify(execFile)('sh', ['-c', command], {
    env: { ...process.env, ...env },
    timeout: 20_000,
  });
  return JSON.parse(stdout);
}

describe('run controls in a real browser', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  let page: Page;
  const errors: string[] = [];
  const slow = () => seed.workflows.find((w) => w.name === 'Slow summary')!.id;
  const runIdOfPage = () => /\/runs\/(run_\w+)$/.exec(new URL(page.url()).pathname)![1]!;

  let demo: DemoConsole | undefined;
  beforeAll(async () => {
    demo = await openDemoConsole({
      watch: (p) => p.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`)),
    });
    ({ server, seed, api, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  it('Cancel stops a running run; Retry starts a new run with the same inputs on the same version; a second Retry of that run answers the same new run', async () => {
    await page.goto(`${server.baseUrl}/workflows/${slow()}`);
    await page.fill('#input_text', 'a slow summary of many words that streams for a few seconds');
    await page.click('#run-workflow');
    await page.waitForURL(/\/runs\/run_/);
    const first = runIdOfPage();
    expect(await axeViolations(page)).toEqual([]);
    await page.click('#cancel-run button');
    await page.waitForURL((url) => url.searchParams.get('done') === 'run-cancelled');
    expect(await page.textContent('[role=status]')).toMatch(/^Run cancelled\./);
    expect(await page.textContent('#run-status')).toBe('cancelled');
    expect(await page.locator('#cancel-run').count()).toBe(0);
    await screenshot(page, 'run-cancelled-desktop');

    await page.click('#retry-run');
    await page.waitForURL((url) => url.pathname.includes('/runs/') && !url.pathname.endsWith(first));
    const retried = runIdOfPage();
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: slow(), run_id: retried } },
    });
    expect(data!.data).toMatchObject({
      inputs: { text: 'a slow summary of many words that streams for a few seconds' },
      workflow_version: 1,
      retry_of: first,
    });
    // The page links the run it retries and names the steps it took from it (the input's, at least).
    expect(await page.getAttribute('#retry-of a', 'href')).toBe(`/workflows/${slow()}/runs/${first}`);
    expect(await page.textContent('#retry-of')).toMatch(/reused, not made again\.$/);
    await page.click('#cancel-run button');
    await page.waitForURL((url) => url.searchParams.get('done') === 'run-cancelled');

    // The first run's Retry again: the same retry, not a third run.
    await page.goto(`${server.baseUrl}/workflows/${slow()}/runs/${first}`);
    await page.click('#retry-run');
    await page.waitForURL((url) => url.pathname.endsWith(retried));
  });

  it("Run again opens the run form with the run's inputs to edit; the edited run starts with them", async () => {
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: slow() } } });
    const earlier = data!.data[0]!;
    await page.goto(`${server.baseUrl}/workflows/${slow()}/runs/${earlier.id}`);
    await page.click('#run-again');
    expect(await page.inputValue('#input_text')).toBe(earlier.inputs.text);
    await page.fill('#input_text', 'edited words');
    await page.click('#run-workflow');
    await page.waitForURL(/\/runs\/run_/);
    const run = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: slow(), run_id: runIdOfPage() } },
    });
    expect(run.data!.data.inputs).toEqual({ text: 'edited words' });
    await page.click('#cancel-run button').catch(() => {}); // it may have ended already
  });

  it('Retry is still offered once the workflow has a newer version: it retries the version the run ran', async () => {
    const { data } = await api.GET('/api/workflows/{workflow_id}/runs', {
      params: { path: { workflow_id: slow() }, query: { search: 'cancelled' } },
    });
    const workflow = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: slow() } } });
    const patched = await api.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: slow() }, header: { 'If-Match': workflow.response.headers.get('etag')! } },
      body: { description: 'Changed, so version 2' },
    });
    expect(patched.response.status).toBe(200);
    const cancelled = data!.data[0]!.id;
    await page.goto(`${server.baseUrl}/workflows/${slow()}/runs/${cancelled}`);
    expect(await page.textContent('.run-actions')).toContain('the same inputs on version 1');
    await page.click('#retry-run');
    await page.waitForURL((url) => url.pathname.includes('/runs/') && !url.pathname.endsWith(cancelled));
    const retried = await api.GET('/api/workflows/{workflow_id}/runs/{run_id}', {
      params: { path: { workflow_id: slow(), run_id: runIdOfPage() } },
    });
    expect(retried.data!.data).toMatchObject({ workflow_version: 1, retry_of: cancelled });
    await page.click('#cancel-run button').catch(() => {}); // it may have ended already
  });

  it('the history filters by status (links) and by the start of a run id (search); the pages stay axe clean and fit a phone', async () => {
    const all = (await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: slow() } } }))
      .data!.data;
    await page.goto(`${server.baseUrl}/workflows/${slow()}`);
    await page.click('.status-filter a:text-is("cancelled")');
    await page.waitForURL((url) => url.searchParams.get('search') === 'cancelled');
    const shown = await page.locator('table.runs tbody tr').count();
    expect(shown).toBe(all.filter((r) => r.status === 'cancelled').length);
    expect(await page.locator('.status-filter a[aria-current]').textContent()).toBe('cancelled');
    await page.fill('#run-search', all[0]!.id.slice(0, 20));
    await page.click('.run-search button');
    await page.waitForURL((url) => url.searchParams.get('search') === all[0]!.id.slice(0, 20));
    expect(await page.locator('table.runs tbody tr code').allTextContents()).toEqual(
      all.filter((r) => r.id.startsWith(all[0]!.id.slice(0, 20))).map((r) => r.id),
    );
    await page.fill('#run-search', 'run_nothing_like_it');
    await page.press('#run-search', 'Enter');
    await page.waitForURL((url) => url.searchParams.get('search') === 'run_nothing_like_it');
    expect(await page.textContent('#runs-heading + nav + form + p')).toContain('No runs match');
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      for (const path of [`/workflows/${slow()}?search=cancelled`, `/workflows/${slow()}/runs/${all[0]!.id}`]) {
        await page.goto(`${server.baseUrl}${path}`);
        expect(await scrollsSideways(page), `${path} at ${width}px`).toBe(false);
        expect(await axeViolations(page), `${path} at ${width}px`).toEqual([]);
      }
      await screenshot(page, `run-controls-${device}`);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    expect(errors.filter((e) => !/status of 40[49]/.test(e))).toEqual([]);
  });

  it('copy as curl: the command on the workflow page, run in a shell with API_KEY set, starts a run with those inputs', async () => {
    const triage = seed.workflows.find((w) => w.name === 'Triage')!.id;
    await page.goto(`${server.baseUrl}/workflows/${triage}`);
    await page.fill('#input_ticket', "it's urgent");
    await page.click('details.curl summary');
    const command = await page.locator('details.curl code[data-copy]').textContent();
    expect(command).toContain(`${server.baseUrl}/api/workflows/${triage}/run`);
    // The form's values are not in the command until the page is rendered with them: the placeholder stands.
    const started = (await shell(command!, { API_KEY: seed.apiKey.token })) as {
      data: { id: string; inputs: unknown };
    };
    expect(started.data.inputs).toEqual({ ticket: 'your ticket' });
    // From a run's page, the command carries that run's inputs, quotes and all.
    await page.click('#run-workflow');
    await page.waitForURL(/\/runs\/run_/);
    const again = await page.locator('details.curl code[data-copy]').textContent();
    const rerun = (await shell(again!, { API_KEY: seed.apiKey.token })) as { data: { inputs: unknown } };
    expect(rerun.data.inputs).toEqual({ ticket: "it's urgent" });
  });
});
