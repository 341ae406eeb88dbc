// Running a workflow from its editor, in a real Chromium: the Run part starts a run of the saved
// graph, each node's status (and a switch's chosen case) shows on the node list and on the canvas
// as the run's events arrive, the side panel shows the selected node's input, output, attempts and tokens,
// answers an approval, retries from the failed node and tests one node on pinned values; the run
// page says a switch's case as soon as it finishes. Real server, store, queue and worker; a local
// provider speaking OpenAI's wire format.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { launchChromium, logInPage, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { replyGate, startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { approvalExample } from '../../test/support/approvals.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];

/** A ticket router: the switch reads the ticket, its `urgent` case asks the model, the others answer by template. */
const router: WorkflowCreate = {
  name: 'Ticket router',
  nodes: [
    { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
    {
      id: 'route',
      type: 'switch',
      config: {
        // On the input, so that a test of a node after it chooses again from the pinned inputs.
        value: 'inputs.ticket',
        cases: [
          { name: 'urgent', operator: 'contains', value: 'urgent' },
          { name: 'billing', operator: 'contains', value: 'invoice' },
        ],
      },
    },
    {
      id: 'page',
      type: 'llm_call',
      config: { model: 'gpt-4o-mini', prompt: 'Page on-call: {{ nodes.route.output }}' },
    },
    { id: 'refund', type: 'template', config: { template: 'Refund: {{ nodes.route.output }}' } },
    { id: 'later', type: 'template', config: { template: 'Later: {{ nodes.route.output }}' } },
    { id: 'now', type: 'text_output', config: { format: 'plain' } },
    { id: 'money', type: 'text_output', config: { format: 'plain' } },
    { id: 'queue', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'ticket', to: 'route' },
    { from: 'route', to: 'page', case: 'urgent' },
    { from: 'route', to: 'refund', case: 'billing' },
    { from: 'route', to: 'later', case: 'default' },
    { from: 'page', to: 'now' },
    { from: 'refund', to: 'money' },
    { from: 'later', to: 'queue' },
  ],
};

describe('running a workflow from its editor, in a real browser', () => {
  let fake: FakeOpenAI;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let api: ApiClient;
  let routerId: string;
  const errors: string[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'gpt-4o-mini' },
    });
    const user = await createUser(server.ctx, { login: 'alice', password: 'correct horse battery' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'alice',
      name: 'runs',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    api = createApiClient(server.baseUrl, { bearer: token });
    routerId = (await api.POST('/api/workflows', { body: router })).data!.data.id;
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('pageerror', (err) => errors.push(err.message));
    await logInPage(page, server.baseUrl, 'alice', 'correct horse battery', '/workflows');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  const press = async (selector: string) => {
    await page.focus(selector);
    await page.keyboard.press('Enter');
  };
  const mark = (nodeId: string) => `.node-list [data-node-button="${nodeId}"] [data-run-status]`;
  const runFrom = async (workflowId: string, ticket: string) => {
    await page.goto(`${server.baseUrl}/workflows/${workflowId}/edit`);
    await page.fill('#editor-input-ticket', ticket);
    await press('#editor-run-start');
  };
  const announced = (text: string) =>
    page.waitForFunction((t) => document.querySelector('#editor-run-announce')?.textContent?.includes(t), text);

  it('runs the saved graph: each node’s status live on the node list, the case taken, the panel of a node', async () => {
    const gate = replyGate();
    fake.replies = [{ kind: 'completion', content: 'Paged.', until: gate.held }];
    await page.goto(`${server.baseUrl}/workflows/${routerId}/edit`);
    await page.evaluate(() => {
      const w = window as unknown as { runEvents: number };
      w.runEvents = 0;
      document.querySelector('[data-builder]')!.addEventListener('editor-run', () => (w.runEvents += 1));
    });
    await page.fill('#editor-input-ticket', 'urgent: the site is down');
    await press('#editor-run-start');
    // The model's answer is held: the llm_call shows running, the switch its case, in words.
    await page.waitForSelector(`${mark('page')}[data-run-status=running]`);
    expect(await page.textContent(mark('route'))).toBe(' · completed, case urgent');
    // The same statuses on the canvas, drawn from the same watched run.
    await page.waitForSelector('[data-canvas-node=page] [data-run-status=running]');
    expect(await page.textContent('[data-canvas-node=route] [data-run-status]')).toBe('completed · case urgent');
    expect(await page.evaluate(() => (window as unknown as { runEvents: number }).runEvents)).toBeGreaterThan(0);
    gate.release();
    await announced('The run completed.');
    expect(await page.textContent(mark('page'))).toBe(' · completed');
    expect(await page.textContent(mark('refund'))).toBe(' · skipped');
    expect(await page.textContent('[data-canvas-node=page] [data-run-status]')).toBe('completed');

    await press('.node-list [data-node-button=route]');
    // The panel says the status at once, then the step's facts once the run's last state is read
    // (it may first show the step as read while the run went on).
    await page.waitForFunction(() =>
      document.querySelector('[data-panel-step=route] dl[data-step-facts]')?.textContent?.includes('Case taken'),
    );
    const facts = await page.textContent('[data-panel-step=route] dl[data-step-facts]');
    expect(facts).toContain('Case takenurgent');
    await press('.node-list [data-node-button=page]');
    await page.waitForFunction(() => document.querySelector('[data-panel-step=page]')?.textContent?.includes('Paged.'));
    const panel = (await page.textContent('[data-panel-step=page]'))!;
    expect(panel).toContain('Attempts1');
    expect(panel).toContain('Page on-call: urgent: the site is down');
    expect(panel).toContain('Paged.');
    expect(await axeViolations(page)).toEqual([]);
    // The Run part and the panel fit a phone.
    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 800 });
    expect(await scrollsSideways(page)).toBe(false);
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    expect(errors).toEqual([]);
  });

  it('tests one node on pinned values, prefilled from the last run', async () => {
    // The page is still the editor after the run above, the llm_call selected.
    expect(await page.inputValue('#pin-route')).toBe('urgent: the site is down');
    await page.fill('#pin-route', 'a pinned ticket');
    fake.replies = [{ kind: 'completion', content: 'Paged from the test.' }];
    await press('#test-node');
    await page.waitForSelector('[data-test-result=completed]');
    const result = (await page.textContent('[data-test-result]'))!;
    expect(result).toContain('Paged from the test.');
    expect(result).toContain('page: completed');
    expect(result).toMatch(/\d+ tokens/);
    expect(fake.requests.at(-1)!.messages.at(-1)!.content).toBe('Page on-call: a pinned ticket');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('retries from the failed node: the new run reuses what completed', async () => {
    fake.replies = [{ kind: 'error', status: 400, message: 'Refused.' }];
    await runFrom(routerId, 'urgent: again');
    await announced('The run failed.');
    expect(await page.getAttribute(mark('page'), 'data-run-status')).toBe('failed');
    await press('.node-list [data-node-button=page]');
    await page.waitForSelector('[data-retry-run]');
    fake.replies = [{ kind: 'completion', content: 'Paged at last.' }];
    await press('[data-retry-run]');
    await announced('The run completed.');
    expect(await page.getAttribute(mark('page'), 'data-run-status')).toBe('completed');
    expect(await page.textContent(mark('route'))).toBe(' · completed, case urgent');
    await page.waitForFunction(() =>
      document.querySelector('[data-panel-step=page]')?.textContent?.includes('Paged at last.'),
    );
    expect(errors).toEqual([]);
  });

  it('answers an approval from the side panel', async () => {
    fake.replies = [{ kind: 'completion', content: 'Sorry! Refunded.' }];
    const id = (await api.POST('/api/workflows', { body: approvalExample() })).data!.data.id;
    await runFrom(id, 'Charged twice');
    await page.waitForSelector(`${mark('review')}[data-run-status=waiting]`);
    await press('.node-list [data-node-button=review]');
    await page.waitForSelector('[data-approve=review]');
    expect(await page.textContent('[data-node-panel] .approval')).toContain('Sorry! Refunded.');
    expect(await axeViolations(page)).toEqual([]);
    await press('[data-approve=review]');
    await announced('The run completed.');
    expect(await page.getAttribute(mark('send'), 'data-run-status')).toBe('completed');
    expect(await page.getAttribute(mark('hold'), 'data-run-status')).toBe('skipped');
    expect(errors).toEqual([]);
  });

  it('says when the graph has unsaved changes (a run takes the saved one)', async () => {
    await page.goto(`${server.baseUrl}/workflows/${routerId}/edit`);
    expect(await page.isHidden('[data-unsaved]')).toBe(true);
    await page.focus('#graph');
    await page.keyboard.press('End');
    await page.keyboard.type(' ');
    await page.waitForSelector('[data-unsaved]:not([hidden])');
    expect(await page.textContent('[data-unsaved]')).toContain('Run runs the saved graph');
  });

  it('the run page says a switch’s case as soon as it finishes, before the run ends', async () => {
    const gate = replyGate();
    fake.replies = [{ kind: 'completion', content: 'Paged.', until: gate.held }];
    const { data } = await api.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: routerId } },
      body: { inputs: { ticket: 'urgent!' } },
    });
    await page.goto(`${server.baseUrl}/workflows/${routerId}/runs/${data!.data.id}`);
    await page.waitForFunction(
      () => document.querySelector('tr[data-step=route] [data-field=case]')?.textContent === 'Took case urgent',
    );
    expect(await page.getAttribute('tr[data-step=page]', 'class')).toContain('status-running');
    gate.release();
    await page.waitForSelector('[data-run-status] .status-completed');
    expect(await page.textContent('tr[data-step=route] [data-field=case]')).toBe('Took case urgent');
  });
});
