import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import { editorSchemas } from './nodeTypes.ts';
import type { DemoSeed } from '../accounts/seed.ts';

// The editor builds, not only shows, in a real Chromium: a palette of every node
// type the contract's WorkflowNode maps, a form per type from its config schema, edges added with
// the keyboard, drawn on the canvas with a mouse and removed, the canvas and the problems
// following the typing, and the JSON (the form's field) following the builder. Keyboard only where
// a user could be (focus and Enter, no clicks), axe clean and no sideways scroll at phone width.

type Graph = {
  nodes: { id: string; type: string; config: Record<string, unknown> }[];
  edges: { from: string; to: string; branch?: string }[];
};

describe('the workflow builder in a real browser', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  let page: Page;
  let demo: DemoConsole | undefined;
  const errors: string[] = [];

  beforeAll(async () => {
    demo = await openDemoConsole({ height: 900, watch: (p) => p.on('pageerror', (err) => errors.push(err.message)) });
    ({ server, seed, api, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  const graph = async (): Promise<Graph> => JSON.parse(await page.inputValue('#graph')) as Graph;
  const press = async (selector: string, key = 'Enter') => {
    await page.focus(selector);
    await page.keyboard.press(key);
  };
  /** Types into a field by keyboard, replacing what it holds. */
  const typeInto = async (selector: string, text: string) => {
    await page.focus(selector);
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(text);
  };

  it('offers every node type of the contract, each with a form of every config property of its schema', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    const types = editorSchemas().nodeTypes;
    expect(
      await page.locator('#add-node-type option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(types.map((t) => t.type));
    for (const spec of types) {
      await page.selectOption('#add-node-type', spec.type);
      expect(await page.textContent('#add-node-hint')).toBe(spec.description ?? '');
      await press('#add-node');
      const { nodes } = await graph();
      const index = nodes.length - 1;
      expect(nodes[index]!.type).toBe(spec.type);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('node-id');
      for (const key of Object.keys(spec.config.properties ?? {})) {
        expect(
          await page.locator(`#builder [data-pointer="/nodes/${index}/config/${key}"]`).count(),
          `${spec.type}.${key}`,
        ).toBe(1);
      }
      // Each form (an LLM call's nested retry group, a condition's choices, ...) axe clean at both widths.
      for (const width of Object.values(SCREEN_WIDTHS)) {
        await page.setViewportSize({ width, height: 900 });
        expect(await scrollsSideways(page), `${spec.type} at ${width}px`).toBe(false);
        expect(await axeViolations(page), `${spec.type} at ${width}px`).toEqual([]);
      }
      await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    }
    expect(errors).toEqual([]);
  });

  it('builds a workflow by keyboard: a node from the palette, its form, an edge; the canvas and problems follow as you type; it saves', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await typeInto('#name', 'Built by keyboard');
    // The starter graph is input -> answer -> result; put a template between input and result.
    await page.selectOption('#add-node-type', 'template');
    await press('#add-node');
    await typeInto('#node-id', 'framed');
    await page.keyboard.press('Tab'); // the id is taken on change
    await typeInto('#cfg-template', 'Framed: {{ inputs.nope }}');
    // The problem shows at its field while typing, and the node is marked in the list and the picture.
    await page.waitForSelector('#cfg-template[aria-invalid=true] + .live-error');
    // (An answer about the text before the typing may show first; the one about this text follows.)
    await expect.poll(() => page.textContent('#cfg-template + .live-error')).toMatch(/nope/);
    await page.waitForSelector('.react-flow__node[data-id=framed] .canvas-node.has-problem');
    expect(await page.locator('.node-list button.has-problem').count()).toBe(1);
    await typeInto('#cfg-template', 'Framed: {{ inputs.text }}');
    await page.waitForSelector('#live-problems .success');
    expect(await page.locator('#cfg-template[aria-invalid]').count()).toBe(0);

    await page.selectOption('#connect-from', 'input');
    await page.selectOption('#connect-to', 'framed');
    await press('#add-edge');
    await page.selectOption('#connect-from', 'framed');
    await page.selectOption('#connect-to', 'result');
    await press('#add-edge');
    await page.waitForSelector('.react-flow__edge[data-id="framed->result::"]');
    expect((await graph()).edges).toEqual([
      { from: 'input', to: 'answer' },
      { from: 'answer', to: 'result' },
      { from: 'input', to: 'framed' },
      { from: 'framed', to: 'result' },
    ]);
    expect((await graph()).nodes.find((n) => n.id === 'framed')).toEqual({
      id: 'framed',
      type: 'template',
      config: { template: 'Framed: {{ inputs.text }}' },
    });

    // Remove an edge: gone from the JSON and, once redrawn, from the picture.
    await press('.edge-list button[aria-label="Remove the edge answer → result"]');
    expect((await graph()).edges).not.toContainEqual({ from: 'answer', to: 'result' });
    await page.waitForSelector('.react-flow__edge[data-id="answer->result::"]', { state: 'detached' });

    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 900 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      await screenshot(page, `workflow-builder-${device}`);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    await press('#save-workflow');
    await page.waitForURL(/\/workflows\/wf_\w+$/);
    const id = /wf_\w+$/.exec(page.url())![0];
    const { data } = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
    expect(data!.data.nodes.map((n) => n.id)).toEqual(['input', 'answer', 'result', 'framed']);
    expect(data!.data.edges).toContainEqual({ from: 'framed', to: 'result' });
    expect(errors).toEqual([]);
  });

  it('selects a node on the canvas (focused, Enter works), draws an edge from its output to an input, and removes one clicked on the canvas', async () => {
    const triage = seed.workflows.find((w) => w.name === 'Triage')!.id;
    await page.goto(`${server.baseUrl}/workflows/${triage}/edit`);
    await page.waitForSelector('.react-flow__node');
    await press('.react-flow__node[data-id=queue]');
    await expect.poll(() => page.inputValue('#node-id')).toBe('queue');
    // A condition's form: its operator is a choice of the contract's enum.
    await press('.react-flow__node[data-id=is_urgent]');
    await expect.poll(() => page.inputValue('#node-id')).toBe('is_urgent');
    expect(await page.locator('#cfg-operator option').allTextContents()).toEqual([
      'equals',
      'not_equals',
      'contains',
      'not_contains',
      'starts_with',
      'ends_with',
      'empty',
      'not_empty',
    ]);
    // Its outputs are its branches, labelled; so are its edges.
    expect(await page.locator('.react-flow__node[data-id=is_urgent] .canvas-output-label').allTextContents()).toEqual([
      'true',
      'false',
    ]);
    expect(await page.locator('.react-flow__edge-text').allTextContents()).toEqual(['true', 'false']);

    const before = (await graph()).edges.length;
    const centre = async (selector: string) => {
      const box = (await page.locator(selector).first().boundingBox())!;
      return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    };
    await page.locator('.canvas').scrollIntoViewIfNeeded();
    const from = await centre('.react-flow__node[data-id=page] .react-flow__handle.source');
    const to = await centre('.react-flow__node[data-id=queue] .react-flow__handle.target');
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
    await page.mouse.move(to.x, to.y, { steps: 5 });
    await page.mouse.up();
    await expect.poll(async () => (await graph()).edges).toHaveLength(before + 1);
    expect((await graph()).edges.at(-1)).toEqual({ from: 'page', to: 'queue' });
    await page.waitForSelector('.react-flow__edge[data-id="page->queue::"]');
    expect(await page.locator('.edge-list li').count()).toBe(before + 1);
    // Clicked on the canvas, the edge is selected; Delete removes it.
    await page
      .locator('.react-flow__edge[data-id="page->queue::"] .react-flow__edge-interaction')
      .click({ force: true });
    await page.keyboard.press('Delete');
    await expect.poll(async () => (await graph()).edges).toHaveLength(before);
    await page.waitForSelector('.react-flow__edge[data-id="page->queue::"]', { state: 'detached' });
    expect(errors).toEqual([]);
  });

  it('deletes a workflow by keyboard after a confirmation naming its version (axe clean, phone width too)', async () => {
    const slow = seed.workflows.find((w) => w.name === 'Slow summary')!.id;
    await page.goto(`${server.baseUrl}/workflows/${slow}`);
    await press('#delete-workflow');
    await page.waitForURL(`${server.baseUrl}/workflows/${slow}/delete`);
    expect(await page.textContent('main')).toContain('Version 1 of this workflow');
    for (const width of Object.values(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    // The skip link leads to the red button: Tab, Enter, then Enter on it.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('confirm');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/workflows');
    expect(await page.textContent('[role=status]')).toMatch(/^Workflow deleted\./);
    expect(await axeViolations(page)).toEqual([]);
    expect(
      (await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: slow } } })).response.status,
    ).toBe(404);
  });
});
