import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { screenshot, SCREEN_WIDTHS, scrollsSideways, steadyCentre } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';

// The editor's canvas (@xyflow/react) in a real Chromium: a node dragged keeps its place through a
// save and a reload (its `ui`), an edge drawn from a switch's case handle writes that `case`, undo
// and redo, copy and paste with fresh ids, a multi-selection deleted, the palette searched and
// added from by keyboard; axe clean and no sideways scroll at desktop and phone widths.

type Graph = {
  nodes: { id: string; type: string; ui?: { x: number; y: number }; config: Record<string, unknown> }[];
  edges: { from: string; to: string; branch?: string; case?: string }[];
};

describe('the editor canvas in a real browser', () => {
  let server: TestServer;
  let api: ApiClient;
  let page: Page;
  let demo: DemoConsole | undefined;
  const errors: string[] = [];

  beforeAll(async () => {
    demo = await openDemoConsole({ height: 1000, watch: (p) => p.on('pageerror', (err) => errors.push(err.message)) });
    ({ server, api, page } = demo);
  });
  afterAll(async () => {
    await demo?.close();
  });

  const graph = async (): Promise<Graph> => JSON.parse(await page.inputValue('#graph')) as Graph;
  const nodeBox = (id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  const centreOf = (selector: string) => steadyCentre(page, selector);
  const showCanvas = () => page.locator('.canvas').scrollIntoViewIfNeeded();
  const drag = async (from: { x: number; y: number }, to: { x: number; y: number }) => {
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
    await page.mouse.move(to.x, to.y, { steps: 5 });
    await page.mouse.up();
  };
  /** Adds a node from the palette: its search, typed, and Enter. */
  const addFromPalette = async (search: string) => {
    await page.click('[data-canvas-palette]');
    await page.keyboard.type(search);
    await page.keyboard.press('Enter');
  };

  it('draws the starter graph on a canvas in place of the picture, every node with its handles', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('.react-flow__node');
    const { nodes } = await graph();
    expect(await page.locator('.react-flow__node').count()).toBe(nodes.length);
    expect(await page.isHidden('[data-preview-graph]')).toBe(true);
    expect(await page.locator('.react-flow__edge').count()).toBe((await graph()).edges.length);
    expect(errors).toEqual([]);
  });

  it('a dragged node keeps its place (ui) through a save and a reload', async () => {
    await page.fill('#name', 'Canvas drag');
    const [first] = (await graph()).nodes;
    const before = await centreOf(`.react-flow__node[data-id="${first!.id}"] .canvas-node-id`);
    await drag(before, { x: before.x + 60, y: before.y + 150 });
    await expect.poll(async () => (await graph()).nodes[0]!.ui).toBeDefined();
    const placed = (await graph()).nodes[0]!.ui!;
    await page.click('#save-workflow');
    await page.waitForURL(/\/workflows\/wf_\w+$/);
    const id = /\/workflows\/(wf_\w+)$/.exec(page.url())![1]!;
    const saved = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
    expect(saved.data!.data.nodes[0]!.ui).toEqual(placed);
    await page.goto(`${server.baseUrl}/workflows/${id}/edit`);
    await page.waitForSelector('.react-flow__node');
    expect((await graph()).nodes[0]!.ui).toEqual(placed);
    const style = await nodeBox(first!.id).getAttribute('style');
    expect(style).toContain(`translate(${placed.x}px, ${placed.y}px)`);
    // By keyboard: a focused node, selected with Enter, moves with the arrow keys, written the same way.
    await nodeBox(first!.id).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await graph()).nodes[0]!.ui!.x).toBeGreaterThan(placed.x);
    expect((await graph()).nodes[0]!.ui!.y).toBe(placed.y);
  });

  it('adds from the searched palette by keyboard, at the view’s centre; a case handle drawn to a node writes that case', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('.react-flow__node');
    const count = (await graph()).nodes.length;
    await page.focus('[data-canvas-palette]');
    await page.keyboard.type('swi');
    expect(await page.locator('[data-palette-type]').first().getAttribute('data-palette-type')).toBe('switch');
    expect(await page.locator('[data-palette-type]').count()).toBeLessThan(5);
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await graph()).nodes.length).toBe(count + 1);
    const sw = (await graph()).nodes.at(-1)!;
    expect(sw.type).toBe('switch');
    expect(sw.ui).toBeDefined();
    await nodeBox(sw.id).waitFor();
    const handles = await page
      .locator(`.react-flow__node[data-id="${sw.id}"] .react-flow__handle.source`)
      .evaluateAll((hs) => hs.map((h) => h.getAttribute('data-handleid')));
    expect(handles.at(-1)).toBe('case:default');
    const caseHandle = handles[0]!;
    await showCanvas();
    const target = (await graph()).nodes.find((n) => n.type === 'text_output')!;
    await drag(
      await centreOf(`.react-flow__node[data-id="${sw.id}"] [data-handleid="${caseHandle}"]`),
      await centreOf(`.react-flow__node[data-id="${target.id}"] .react-flow__handle.target`),
    );
    await expect
      .poll(async () => (await graph()).edges.find((e) => e.from === sw.id))
      .toEqual({ from: sw.id, to: target.id, case: caseHandle.slice(5) });
    await page.waitForSelector(`.react-flow__edge-textwrapper, .react-flow__edge-text`);
    expect(await page.locator('.react-flow__edge-text').allTextContents()).toContain(caseHandle.slice(5));
    expect(errors).toEqual([]);
  });

  it('undoes and redoes by key and by button, copies and pastes with fresh ids and the edges between, deletes a multi-selection', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('.react-flow__node');
    const start = await graph();
    await page.click('#canvas-layout');
    await expect.poll(async () => (await graph()).nodes.every((n) => n.ui)).toBe(true);
    const laidOut = await graph();
    // Undo by key (the focus on the canvas), redo by button.
    await page.click('.react-flow__pane', { position: { x: 20, y: 20 } });
    await page.keyboard.press('ControlOrMeta+z');
    await expect.poll(graph).toEqual(start);
    await page.click('#canvas-redo');
    await expect.poll(graph).toEqual(laidOut);
    await page.click('#canvas-undo');
    await expect.poll(graph).toEqual(start);
    await page.click('.react-flow__pane', { position: { x: 20, y: 20 } });
    await page.keyboard.press('Control+y');
    await expect.poll(graph).toEqual(laidOut);
    await page.keyboard.press('Control+Shift+z'); // nothing left to redo
    expect(await graph()).toEqual(laidOut);

    // Box-select everything (shift-drag on the pane), copy, paste: fresh ids, the edges between them kept.
    await showCanvas();
    const pane = (await page.locator('.react-flow__pane').boundingBox())!;
    await page.keyboard.down('Shift');
    await drag({ x: pane.x + 5, y: pane.y + 5 }, { x: pane.x + pane.width - 60, y: pane.y + pane.height - 30 });
    await page.keyboard.up('Shift');
    await expect.poll(() => page.locator('.react-flow__node.selected').count()).toBe(laidOut.nodes.length);
    await page.keyboard.press('ControlOrMeta+c');
    await page.keyboard.press('ControlOrMeta+v');
    await expect.poll(async () => (await graph()).nodes.length).toBe(laidOut.nodes.length * 2);
    const pasted = (await graph()).nodes.slice(laidOut.nodes.length);
    const ids = new Set(laidOut.nodes.map((n) => n.id));
    expect(pasted.every((n) => !ids.has(n.id))).toBe(true);
    expect(pasted.map((n) => n.type)).toEqual(laidOut.nodes.map((n) => n.type));
    expect(pasted.map((n) => n.ui)).toEqual(laidOut.nodes.map((n) => ({ x: n.ui!.x + 40, y: n.ui!.y + 40 })));
    const pastedIds = new Set(pasted.map((n) => n.id));
    expect((await graph()).edges.filter((e) => pastedIds.has(e.from) && pastedIds.has(e.to))).toHaveLength(
      laidOut.edges.length,
    );
    // The pasted ones are selected: Delete removes them (and their edges) at once.
    await expect.poll(() => page.locator('.react-flow__node.selected').count()).toBe(pasted.length);
    await page.keyboard.press('Delete');
    await expect.poll(graph).toEqual(laidOut);
    // Shift-click two nodes, then the toolbar's Delete selected.
    await page.click('.react-flow__pane', { position: { x: 20, y: 20 } });
    const [a, b] = laidOut.nodes;
    await nodeBox(a!.id).click();
    await nodeBox(b!.id).click({ modifiers: ['Shift'] });
    await expect.poll(() => page.locator('.react-flow__node.selected').count()).toBe(2);
    await page.click('#canvas-delete');
    await expect
      .poll(async () => (await graph()).nodes.map((n) => n.id))
      .toEqual(laidOut.nodes.slice(2).map((n) => n.id));
    await page.click('#canvas-undo');
    await expect.poll(graph).toEqual(laidOut);
    expect(errors).toEqual([]);
  });

  it("draws a watched run's statuses and a switch's chosen case when the editor-run event comes", async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('.react-flow__node');
    await addFromPalette('switch');
    await expect.poll(async () => (await graph()).nodes.some((n) => n.type === 'switch')).toBe(true);
    const { nodes } = await graph();
    const sw = nodes.find((n) => n.type === 'switch')!;
    const [first] = nodes;
    expect(await page.locator('.run-status').count()).toBe(0);
    // As the run-watching code says it: EditorState.run, then the event on the builder's root.
    await page.evaluate(
      ([a, s]) => {
        const run = {
          id: 'run_1',
          nodes: { [a!]: { status: 'completed' }, [s!]: { status: 'running', case: 'default' } },
        };
        document.querySelector('[data-builder]')!.dispatchEvent(new CustomEvent('editor-run', { detail: run }));
      },
      [first!.id, sw.id],
    );
    await expect.poll(() => nodeBox(first!.id).locator('.run-status').textContent()).toBe('completed');
    expect(await nodeBox(sw.id).locator('.run-status').textContent()).toBe('running · case default');
    expect(await nodeBox(sw.id).locator('.canvas-node').getAttribute('class')).toContain('status-running');
    expect(errors).toEqual([]);
  });

  it('is axe clean, and fits, at desktop and phone widths', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('.react-flow__node');
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 1000 });
      await page.locator('.react-flow__node').first().waitFor();
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      await screenshot(page, `workflow-canvas-${device}`);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 1000 });
    expect(errors).toEqual([]);
  });
});
