import type { ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../client/src/index.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import type { TestServer } from '../../test/support/server.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import type { DemoSeed } from '../accounts/seed.ts';

// The form editor finishes what a newcomer builds without typing JSON, in a real Chromium: a
// switch's cases written in a case editor, its edges picking a case (`case`, never `branch`), and
// a node's Id edited without losing the next click or another node. The JSON text is only read.

type Edge = { from: string; to: string; branch?: string; case?: string };
type Graph = { nodes: { id: string; type: string; config: Record<string, unknown> }[]; edges: Edge[] };

describe('the form editor in a real browser', () => {
  let server: TestServer;
  let seed: DemoSeed;
  let api: ApiClient;
  let page: Page;
  let demo: DemoConsole | undefined;
  const errors: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    demo = await openDemoConsole({
      height: 900,
      watch: (p) => {
        p.on('pageerror', (err) => errors.push(err.message));
        p.on('console', (m: ConsoleMessage) => {
          if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.text());
        });
      },
    });
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
  const typeInto = async (selector: string, text: string) => {
    await page.focus(selector);
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(text);
  };
  const optionTexts = (selector: string) => page.locator(`${selector} option`).allTextContents();
  const edgeChoice = (from: string, to: string) => `.edge-list select[aria-label="Case of ${from} → ${to}"]`;

  it('logs no console error on any editor page (the Id field’s pattern compiles with the v flag)', async () => {
    const triage = seed.workflows.find((w) => w.name === 'Triage')!.id;
    for (const path of ['/workflows/new', `/workflows/${triage}/edit`]) {
      await page.goto(`${server.baseUrl}${path}`);
      await page.waitForSelector('#live-problems > *');
      // Chromium compiles the pattern when it checks the field: as one types.
      await page.focus('#node-id');
      await page.keyboard.type('x');
      expect(await page.evaluate(() => document.querySelector<HTMLInputElement>('#node-id')!.checkValidity())).toBe(
        true,
      );
    }
    expect(consoleErrors).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('builds a switch with two cases and default to three outputs with the form only, and saves it', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await typeInto('#name', 'Routed by the form');
    await press('.node-list [data-node-button=answer]');
    await page.selectOption('#add-node-type', 'switch');
    await press('#add-node');
    await typeInto('#node-id', 'route');
    await page.keyboard.press('Tab');

    // The case editor: a row per case, its operator a choice of the schema's operators.
    await press('#cfg-cases-add');
    await press('#cfg-cases-add');
    expect(await optionTexts('#cfg-cases-0-operator')).toEqual([
      '==',
      '!=',
      '<',
      '<=',
      '>',
      '>=',
      'contains',
      'matches',
      'empty',
      'not_empty',
      'in',
    ]);
    await typeInto('#cfg-cases-0-name', 'urgent');
    await page.selectOption('#cfg-cases-0-operator', 'contains');
    await typeInto('#cfg-cases-0-value', 'urgent');
    await typeInto('#cfg-cases-1-name', 'billing');
    await page.selectOption('#cfg-cases-1-operator', 'matches');
    await typeInto('#cfg-cases-1-value', 'invoice|refund');
    expect((await graph()).nodes.find((n) => n.id === 'route')!.config).toEqual({
      cases: [
        { name: 'urgent', operator: 'contains', value: 'urgent' },
        { name: 'billing', operator: 'matches', value: 'invoice|refund' },
      ],
    });

    // Two more outputs; the starter's answer → result becomes answer → route → three outputs.
    await page.selectOption('#add-node-type', 'text_output');
    await press('#add-node');
    await press('#add-node');
    await press('.edge-list button[aria-label="Remove the edge answer → result"]');
    await page.selectOption('#connect-from', 'answer');
    await page.selectOption('#connect-to', 'route');
    // Out of a non-switch node the choices are as they were.
    expect(await optionTexts('#connect-follow')).toEqual(['always', 'when true', 'when false']);
    await press('#add-edge');
    await page.selectOption('#connect-from', 'route');
    expect(await optionTexts('#connect-follow')).toEqual(['case urgent', 'case billing', 'default']);
    for (const [to, follow] of [
      ['result', 'urgent'],
      ['text_output_1', 'billing'],
      ['text_output_2', 'urgent'],
    ] as const) {
      await page.selectOption('#connect-from', 'route');
      await page.selectOption('#connect-to', to);
      await page.selectOption('#connect-follow', follow);
      await press('#add-edge');
    }
    // The edge list shows the chosen case, and changing it writes `case`.
    expect(await page.locator(edgeChoice('route', 'text_output_1')).inputValue()).toBe('billing');
    expect(await optionTexts(edgeChoice('route', 'text_output_2'))).toEqual(['case urgent', 'case billing', 'default']);
    await page.selectOption(edgeChoice('route', 'text_output_2'), 'default');
    expect(await page.locator('.edge-list select[aria-label="Branch of input → answer"]').count()).toBe(1);
    // A case renamed takes its edges along, even through a name another case has on the way.
    await press('.node-list [data-node-button=route]');
    await typeInto('#cfg-cases-1-name', 'urgently');
    await page.keyboard.press('Tab');
    expect(await page.locator(edgeChoice('route', 'text_output_1')).inputValue()).toBe('urgently');
    const edges = (await graph()).edges;
    expect(edges.filter((e) => e.from === 'route')).toEqual([
      { from: 'route', to: 'result', case: 'urgent' },
      { from: 'route', to: 'text_output_1', case: 'urgently' },
      { from: 'route', to: 'text_output_2', case: 'default' },
    ]);
    await page.waitForSelector('#live-problems .success');
    for (const width of Object.values(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 900 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      if (process.env.ED_SHOT) await page.screenshot({ path: `/tmp/ed-case-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });

    await press('#save-workflow');
    await page.waitForURL(/\/workflows\/wf_\w+$/);
    const id = /wf_\w+$/.exec(page.url())![0];
    const { data } = await api.GET('/api/workflows/{workflow_id}', { params: { path: { workflow_id: id } } });
    expect(data!.data.edges.filter((e) => e.from === 'route')).toEqual(edges.filter((e) => e.from === 'route'));
    expect(errors).toEqual([]);
  });

  it('keeps the first click after an Id is edited, and refuses an Id another node has at the field', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('#node-id');
    // Edited, then a mouse click on Add node: the node is added.
    await typeInto('#node-id', 'ticket');
    await page.click('#add-node');
    expect((await graph()).nodes.map((n) => n.id)).toEqual(['ticket', 'answer', 'result', 'text_input_1']);
    expect((await graph()).edges[0]).toEqual({ from: 'ticket', to: 'answer' });

    // Edited, then a click into a field of the form: the field takes the typing.
    await page.click('.node-list [data-node-button=answer]');
    await typeInto('#node-id', 'asked');
    await page.click('#cfg-prompt');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('cfg-prompt');
    await page.keyboard.press('End');
    await page.keyboard.type(' please');
    const asked = (await graph()).nodes.find((n) => n.id === 'asked');
    expect(asked?.config.prompt).toBe('{{ inputs.text }} please');

    // Another node's Id: refused at the field, said why, and no node replaced.
    await typeInto('#node-id', 'result');
    expect(await page.textContent('#node-id-local')).toBe(
      '"result" is the Id of another node: each node needs its own.',
    );
    expect(await page.getAttribute('#node-id', 'aria-invalid')).toBe('true');
    await page.keyboard.press('Tab');
    expect((await graph()).nodes.map((n) => n.id)).toEqual(['ticket', 'asked', 'result', 'text_input_1']);
    expect(await page.locator('.node-list [data-node-button]').count()).toBe(4);
    expect(await axeViolations(page)).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a new node’s template names an existing node (the one selected), not the contract example’s', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await press('.node-list [data-node-button=answer]');
    await page.selectOption('#add-node-type', 'condition');
    await press('#add-node');
    const added = (await graph()).nodes.at(-1)!;
    expect(added.config.left).toBe('{{ nodes.answer.output }}');
    expect(await page.inputValue('#cfg-left')).toBe('{{ nodes.answer.output }}');
    expect(errors).toEqual([]);
  });

  it('a run’s page says which case a switch took', async () => {
    const { data: created } = await api.POST('/api/workflows', {
      body: {
        name: 'Routed',
        nodes: [
          { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
          {
            id: 'route',
            type: 'switch',
            config: {
              cases: [
                { name: 'urgent', operator: 'contains', value: 'urgent' },
                { name: 'billing', operator: 'contains', value: 'invoice' },
              ],
            },
          },
          { id: 'now', type: 'text_output', config: { format: 'plain' } },
          { id: 'money', type: 'text_output', config: { format: 'plain' } },
          { id: 'later', type: 'text_output', config: { format: 'plain' } },
        ],
        edges: [
          { from: 'ticket', to: 'route' },
          { from: 'route', to: 'now', case: 'urgent' },
          { from: 'route', to: 'money', case: 'billing' },
          { from: 'route', to: 'later', case: 'default' },
        ],
      },
    });
    const workflowId = created!.data.id;
    for (const [ticket, taken] of [
      ['an invoice is wrong', 'billing'],
      ['nothing much', 'default'],
    ] as const) {
      const { data: started } = await api.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
        body: { inputs: { ticket } },
      });
      expect(started!.data.status).toBe('completed');
      await page.goto(`${server.baseUrl}/workflows/${workflowId}/runs/${started!.data.id}`);
      expect(await page.textContent('tr[data-step=route] [data-field=case]')).toBe(`Took case ${taken}`);
      expect(await page.locator('[data-field=case]').count()).toBe(1);
    }
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('on /workflows/new, the name’s problem shows only once the name was typed in', async () => {
    await page.goto(`${server.baseUrl}/workflows/new`);
    await page.waitForSelector('#live-problems > *');
    expect(await page.textContent('#live-problems')).toContain('No problems');
    await typeInto('#name', 'x');
    await page.keyboard.press('Backspace');
    await page.waitForFunction(() => document.querySelector('#live-problems')?.textContent?.includes('Name:'));
    expect(errors).toEqual([]);
  });
});
