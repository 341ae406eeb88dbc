import type { ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import type { DemoSeed } from '../accounts/seed.ts';

// The node forms know the node types, in a real Chromium: the model a menu of the served models,
// enums as menus, a template field offering what is in scope after `{{` (keyboard only), its live
// preview with the last run's values, and each problem at its field as it is typed, cleared once
// fixed. The JSON text is only read (or written, to open a workflow naming a model not served).

type Graph = { nodes: { id: string; type: string; config: Record<string, unknown> }[]; edges: unknown[] };

describe('node forms that know the node types, in a real browser', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  let page: Page;
  let demo: DemoConsole | undefined;
  const errors: string[] = [];

  beforeAll(async () => {
    demo = await openDemoConsole({
      height: 900,
      watch: (p) => {
        p.on('pageerror', (err) => errors.push(err.message));
        p.on('console', (m: ConsoleMessage) => {
          if (m.type() === 'error') errors.push(m.text());
        });
      },
    });
    ({ server, seed, api, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  const graph = async (): Promise<Graph> => JSON.parse(await page.inputValue('#graph')) as Graph;
  const configOf = async (id: string) => (await graph()).nodes.find((n) => n.id === id)!.config;
  const optionTexts = (selector: string) => page.locator(`${selector} option`).allTextContents();
  const select = async (id: string) => {
    await page.focus(`.node-list [data-node-button="${id}"]`);
    await page.keyboard.press('Enter');
  };
  const clearAndType = async (selector: string, text: string) => {
    await page.focus(selector);
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text);
  };
  const openNew = async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('#live-problems > *');
  };
  const offersShown = () => page.locator('#cfg-prompt-offers [role=option]').allTextContents();

  it('offers the served models as a menu, keeps a model the workflow names that is not served, and marks it at its field', async () => {
    await openNew();
    await select('answer');
    const models = await optionTexts('#cfg-model');
    expect(models[0]).toMatch(/^echo — /);
    expect(models.map((m) => m.split(' — ')[0])).toEqual(
      expect.arrayContaining(['echo', 'echo-slow', 'echo-fail', 'echo-fail-1']),
    );
    await page.selectOption('#cfg-model', 'echo-slow');
    expect(await configOf('answer')).toMatchObject({ model: 'echo-slow' });

    // A workflow naming a model this service does not serve: kept as it is, said so, and the
    // save's problem shown at the menu until another model is chosen.
    const json = JSON.stringify({
      ...(await graph()),
      nodes: (await graph()).nodes.map((n) =>
        n.id === 'answer' ? { ...n, config: { ...n.config, model: 'gpt-9' } } : n,
      ),
    });
    await page.fill('#graph', json);
    await select('answer');
    expect(await page.locator('#cfg-model option:checked').textContent()).toBe('gpt-9 (not served here)');
    await expect.poll(() => page.getAttribute('#cfg-model', 'aria-invalid')).toBe('true');
    const described = (await page.getAttribute('#cfg-model', 'aria-describedby'))!.split(' ');
    const problem = await page.locator(`[id="${described.at(-1)}"]`).textContent();
    expect(problem).toContain('unknown model "gpt-9"');
    await page.focus('#cfg-model');
    await page.selectOption('#cfg-model', 'echo');
    await expect.poll(() => page.getAttribute('#cfg-model', 'aria-invalid')).toBeNull();
    expect(await page.locator('[data-live-error]').count()).toBe(0);
  });

  it('shows every enum as a menu of its values', async () => {
    await openNew();
    await select('result');
    expect(await optionTexts('#cfg-format')).toEqual(['plain', 'markdown', 'json']);
    await page.selectOption('#add-node-type', 'http_request');
    await page.focus('#add-node');
    await page.keyboard.press('Enter');
    expect(await optionTexts('#cfg-method')).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']),
    );
    // A problem inside a JSON box (one header's value) is shown at the box, and cleared with it.
    await clearAndType('#cfg-headers', '{"X-Key": "{{ secrets.KEY | upcase }}"}');
    await expect.poll(() => page.getAttribute('#cfg-headers', 'aria-invalid')).toBe('true');
    const described = (await page.getAttribute('#cfg-headers', 'aria-describedby'))!.split(' ');
    expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toContain('a secret is written');
    await clearAndType('#cfg-headers', '{"X-Key": "{{ secrets.KEY }}"}');
    await expect.poll(() => page.getAttribute('#cfg-headers', 'aria-invalid')).toBeNull();
    await select('input');
    expect(await optionTexts('#cfg-type')).toEqual(
      expect.arrayContaining(['string', 'number', 'integer', 'boolean', 'object', 'array']),
    );
  });

  it('offers what is in scope after {{ in a template field, by keyboard alone', async () => {
    await openNew();
    await select('answer');
    await clearAndType('#cfg-prompt', 'Ticket: {{');
    await expect
      .poll(offersShown)
      .toEqual(['inputs.text', 'nodes.input.output', 'run.id', 'run.created_at', 'workflow.id', 'workflow.version']);
    expect(await page.getAttribute('#cfg-prompt', 'aria-controls')).toBe('cfg-prompt-offers');
    expect(await page.getAttribute('#cfg-prompt', 'aria-activedescendant')).toBe('cfg-prompt-offer-0');
    // Arrow keys move through the list (wrapping), Enter writes the path and closes the braces.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await page.getAttribute('#cfg-prompt', 'aria-activedescendant')).toBe('cfg-prompt-offer-2');
    expect(await page.getAttribute('#cfg-prompt-offer-2', 'aria-selected')).toBe('true');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    expect(await page.inputValue('#cfg-prompt')).toBe('Ticket: {{ nodes.input.output }}');
    expect(await page.isHidden('#cfg-prompt-offers')).toBe(true);
    expect(await configOf('answer')).toMatchObject({ prompt: 'Ticket: {{ nodes.input.output }}' });

    // Typing narrows the list; Tab accepts too; Escape closes it and leaves the text as typed.
    await page.keyboard.type(' at {{ run.c');
    await expect.poll(offersShown).toEqual(['run.created_at']);
    await page.keyboard.press('Tab');
    expect(await page.inputValue('#cfg-prompt')).toBe('Ticket: {{ nodes.input.output }} at {{ run.created_at }}');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('cfg-prompt');
    // Paths that start with the text first, then those containing it.
    await page.keyboard.type(' {{ inp');
    await expect.poll(offersShown).toEqual(['inputs.text', 'nodes.input.output']);
    await page.keyboard.press('Escape');
    expect(await page.isHidden('#cfg-prompt-offers')).toBe(true);
    expect(await page.inputValue('#cfg-prompt')).toMatch(/\{\{ inp$/);
    // Open again (typing), at every width: axe clean, nothing scrolls sideways.
    await page.keyboard.type('u');
    await expect.poll(offersShown).toEqual(['inputs.text', 'nodes.input.output']);
    for (const width of Object.values(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 900 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      if (process.env.FM_SHOT) await page.screenshot({ path: `/tmp/fm-offers-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
  });

  it("completes a switch's value (an expression, no braces) from what is in scope", async () => {
    await openNew();
    const g = await graph();
    g.nodes.push({ id: 'route', type: 'switch', config: { value: 'x', cases: [] } });
    g.edges.push({ from: 'answer', to: 'route' });
    await page.fill('#graph', JSON.stringify(g));
    await page.waitForFunction(() => document.querySelector('[data-node-button="route"]'));
    await select('route');
    await expect
      .poll(() => page.evaluate(() => document.querySelector('#live-problems')?.textContent ?? ''))
      .toMatch(/problem/);
    await clearAndType('#cfg-value', 'nodes.an');
    await expect
      .poll(() => page.locator('#cfg-value-offers [role=option]').allTextContents())
      .toEqual(['nodes.answer.output']);
    await page.keyboard.press('Enter');
    expect(await page.inputValue('#cfg-value')).toBe('nodes.answer.output');
    expect((await configOf('route')).value).toBe('nodes.answer.output');
  });

  it('shows a template problem at its field as it is typed, exactly as the API says it, and clears it once fixed', async () => {
    await openNew();
    await select('answer');
    await clearAndType('#cfg-prompt', '{{ inputs.nope }}');
    await expect.poll(() => page.getAttribute('#cfg-prompt', 'aria-invalid')).toBe('true');
    const ids = (await page.getAttribute('#cfg-prompt', 'aria-describedby'))!.split(' ');
    expect(ids).toContain('cfg-prompt-preview');
    const shown = await page.locator(`[id="${ids.at(-1)}"]`).textContent();
    // The API's own words for the same graph.
    const res = await api.POST('/api/workflows', {
      body: { name: 'same problem', ...(await graph()) } as never,
    });
    const apiProblem = (res.error as { errors: { pointer: string; message: string }[] }).errors.find(
      (e) => e.pointer === '/nodes/1/config/prompt',
    );
    expect(shown).toBe(apiProblem!.message);
    await clearAndType('#cfg-prompt', '{{ inputs.text }}');
    await expect.poll(() => page.getAttribute('#cfg-prompt', 'aria-invalid')).toBeNull();
    expect(await page.getAttribute('#cfg-prompt', 'aria-describedby')).not.toContain('live-problem');
  });

  it("previews each template with the last run's values as it is typed", async () => {
    const triage = seed.workflows.find((w) => w.name === 'Triage')!.id;
    const run = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: triage }, header: { Prefer: 'wait=20' } },
      body: { inputs: { ticket: 'URGENT printer on fire' } },
    });
    expect(run.response.status).toBe(200);
    await page.goto(`${server.baseUrl}/workflows/${triage}/edit`);
    await page.waitForSelector('#live-problems > *');
    await select('page');
    await expect
      .poll(() => page.locator('#cfg-prompt-preview pre').textContent())
      .toBe('Page someone: URGENT printer on fire');
    expect(await page.locator('#cfg-prompt-preview small').textContent()).toMatch(/^Preview with run run_\w+ of /);
    await page.focus('#cfg-prompt');
    await page.keyboard.press('End');
    await page.keyboard.type(' ({{ inputs.ticket | size }} characters)');
    await expect
      .poll(() => page.locator('#cfg-prompt-preview pre').textContent())
      .toBe('Page someone: URGENT printer on fire (22 characters)');
    await select('is_urgent');
    await expect.poll(() => page.locator('#cfg-left-preview pre').textContent()).toBe('urgent printer on fire');
    // A new workflow has no run: the preview says how to get one.
    await openNew();
    await select('answer');
    expect(await page.locator('#cfg-prompt-preview').textContent()).toMatch(/run the workflow once/);
    expect(errors).toEqual([]);
  });
});
