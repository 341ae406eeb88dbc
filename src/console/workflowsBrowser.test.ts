import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type Schemas } from '../../client/src/index.ts';
import { launchChromium, logInPage, screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { createFixture } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';

// The console's workflow and run pages in a real browser at desktop and phone widths, with real
// runs: created by the run form, executed by the real queue and worker, the model provider a
// local server speaking the OpenAI wire format. Graphs are created through the API, as users do.

/** A triage pipeline with a branch: urgent tickets are escalated, the others answered. */
const triageGraph = (): Pick<Schemas['WorkflowCreate'], 'nodes' | 'edges'> => ({
  nodes: [
    { id: 'ticket', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'customer', type: 'text_input', config: { variable: 'customer' } },
    {
      id: 'triage',
      type: 'llm_call',
      config: { model: 'llama-3', prompt: 'Triage for {{ inputs.customer }}: {{ inputs.ticket }}' },
    },
    {
      id: 'is_urgent',
      type: 'condition',
      config: { left: '{{ nodes.triage.output }}', operator: 'contains', right: 'URGENT' },
    },
    { id: 'escalate', type: 'template', config: { template: 'Escalated: {{ nodes.triage.output }}' } },
    { id: 'acknowledge', type: 'template', config: { template: 'Thanks, {{ inputs.customer }}: <we are on it>' } },
    { id: 'urgent_reply', type: 'text_output', config: { format: 'plain' } },
    { id: 'reply', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'ticket', to: 'triage' },
    { from: 'customer', to: 'triage' },
    { from: 'triage', to: 'is_urgent' },
    { from: 'is_urgent', to: 'escalate', branch: 'true' },
    { from: 'is_urgent', to: 'acknowledge', branch: 'false' },
    { from: 'escalate', to: 'urgent_reply' },
    { from: 'acknowledge', to: 'reply' },
  ],
});

describe('workflow and run pages in a real browser', () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let browser: Browser;
  let page: Page;
  let api: ApiClient;
  let triageId: string;
  let othersId: string;
  let othersApi: ApiClient;
  const errors: string[] = [];

  async function createWorkflow(client: ApiClient, body: Schemas['WorkflowCreate']): Promise<string> {
    const { data, error } = await client.POST('/api/workflows', { body });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    return data.data.id;
  }

  async function apiFor(userId: number, login: string): Promise<ApiClient> {
    const { token } = await createAccessToken(server.ctx, {
      userId,
      namespace: login,
      name: 'api',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    return createApiClient(server.baseUrl, { bearer: token });
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      runs: true,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    const me = await createFixture(server.ctx.db);
    const other = await createFixture(server.ctx.db);
    api = await apiFor(me.userId, me.login);
    // More than a page of workflows, so the list paginates; the triage one is the newest.
    for (let i = 1; i <= 21; i++) await createWorkflow(api, { name: `Summariser ${i}`, ...seedGraph('echo') });
    triageId = await createWorkflow(api, {
      name: 'Ticket triage with a rather long name to wrap',
      description: 'Escalates urgent tickets <and answers the rest>',
      ...triageGraph(),
    });
    othersApi = await apiFor(other.userId, other.login);
    othersId = await createWorkflow(othersApi, { name: 'Not yours', ...seedGraph('echo') });

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: 800 } });
    page.setDefaultTimeout(15_000); // a missing element fails its step, with its name, before the test's own limit
    page.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`));
    await logInPage(page, server.baseUrl, me.login, me.password, '/workflows');
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  const unexpectedErrors = () => errors.filter((e) => !/favicon|status of 40[04]/.test(e));

  it("lists the user's workflows a page at a time, newest first, with node count and last run; the nav marks Workflows", async () => {
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.baseUrl}/workflows`);
      expect(await page.locator('nav a[aria-current=page]').allTextContents()).toEqual(['Workflows']);
      expect(await page.locator('table.workflows tbody tr').count()).toBe(20);
      const first = page.locator('table.workflows tbody tr').first();
      expect(await first.locator('a').first().textContent()).toBe('Ticket triage with a rather long name to wrap');
      expect(await first.textContent()).toMatch(/8\s*nodes?/);
      expect(await first.textContent()).toContain('never run');
      expect(await page.textContent('body')).not.toContain('Not yours');
      // Keyboard order starts at the main action: the first Tab stop is the skip link to the first workflow.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip-link');
      await page.keyboard.press('Enter');
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.textContent))
        .toBe('Ticket triage with a rather long name to wrap');
      expect(await scrollsSideways(page), `list at ${width}px`).toBe(false);
      await screenshot(page, `workflows-list-${device}`);
    }
    await page.click('a[rel=next]');
    await page.waitForURL((url) => url.search === '?page=2');
    expect(await page.locator('table.workflows tbody tr a').allTextContents()).toEqual([
      'Summariser 2',
      'Summariser 1',
    ]);
    expect(await page.textContent('.pager')).toContain('Page 2 of 2');
  });

  it("draws the graph as an SVG (nodes in layers, arrows, true/false on the branches, each node's type) and fits a phone", async () => {
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.baseUrl}/workflows/${triageId}`);
      expect(await page.textContent('h1')).toBe('Ticket triage with a rather long name to wrap');
      expect(await page.textContent('main')).toContain('Escalates urgent tickets <and answers the rest>');
      const svg = page.locator('.graph svg');
      // A group of links (each box opens its node's details), named as the picture was.
      expect(await svg.getAttribute('role')).toBe('group');
      expect(await svg.locator('g.node').count()).toBe(8);
      expect(await svg.locator('g.edge').count()).toBe(7);
      expect((await svg.locator('text.branch').allTextContents()).sort()).toEqual(['false', 'true']);
      expect(await svg.locator('g.node[data-node=is_urgent] text.node-type').textContent()).toBe('condition');
      // Its text equivalent for screen readers: each edge in words, in the accessibility tree, not on screen.
      const edgeList = page.getByRole('list', {
        name: 'The graph of Ticket triage with a rather long name to wrap, as text: 7 edges',
      });
      expect(await edgeList.locator('li').allTextContents()).toEqual([
        'text_input "ticket" → llm_call "triage"',
        'text_input "customer" → llm_call "triage"',
        'llm_call "triage" → condition "is_urgent"',
        'condition "is_urgent" when true → template "escalate"',
        'condition "is_urgent" when false → template "acknowledge"',
        'template "escalate" → text_output "urgent_reply"',
        'template "acknowledge" → text_output "reply"',
      ]);
      expect((await edgeList.boundingBox())!.width).toBeLessThanOrEqual(1);
      // Layers: each edge points downwards.
      const top = async (id: string) => (await svg.locator(`g.node[data-node=${id}]`).boundingBox())!.y;
      expect(await top('ticket')).toBe(await top('customer'));
      expect(await top('triage')).toBeGreaterThan(await top('ticket'));
      expect(await top('is_urgent')).toBeGreaterThan(await top('triage'));
      expect(await top('urgent_reply')).toBeGreaterThan(await top('escalate'));
      // The picture scales into its box.
      const box = (await svg.boundingBox())!;
      expect(box.width).toBeLessThanOrEqual(width);
      expect(await scrollsSideways(page), `workflow at ${width}px`).toBe(false);
      expect(await page.locator('nav a[aria-current=page]').allTextContents()).toEqual(['Workflows']);
      await screenshot(page, `workflow-graph-${device}`);
    }
  });

  it('a graph too wide to read shrunk on a phone scrolls inside its own box, never the page', async () => {
    const fan = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    const wideId = await createWorkflow(api, {
      name: 'Six opinions',
      nodes: [
        { id: 'question', type: 'text_input', config: { variable: 'question' } },
        ...fan.map((id) => ({ id, type: 'template' as const, config: { template: `${id}: {{ inputs.question }}` } })),
        { id: 'answers', type: 'text_output', config: { format: 'markdown' } },
      ],
      edges: [...fan.map((id) => ({ from: 'question', to: id })), ...fan.map((id) => ({ from: id, to: 'answers' }))],
    });
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.baseUrl}/workflows/${wideId}`);
      const box = page.locator('.graph');
      const scrolls = await box.evaluate((el) => el.scrollWidth > el.clientWidth);
      // A desktop shows it whole (scaled into the page); a phone keeps it legible and scrolls the box.
      expect(scrolls, `graph box at ${width}px`).toBe(device === 'phone');
      expect(await scrollsSideways(page), `page at ${width}px`).toBe(false);
      await screenshot(page, `workflow-wide-graph-${device}`);
    }
  });

  it('the run form is built from the text_input variables; keyboard focus starts at it; an empty field is named with aria-invalid and aria-describedby', async () => {
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    await page.goto(`${server.baseUrl}/workflows/${triageId}`);
    expect(await page.locator('form.run-form label').allTextContents()).toEqual(['ticket', 'customer']);
    const skipToMainAction = async () => {
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip-link');
      expect(await page.textContent('.skip-link')).toBe('Skip to Run the workflow');
      await page.keyboard.press('Enter');
    };
    await skipToMainAction();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('input_ticket');
    // The browser's own check would stop an empty required field: send it anyway, as a script could.
    await page.evaluate(() => document.querySelector('form.run-form')?.setAttribute('novalidate', ''));
    await page.fill('#input_ticket', 'The export button does nothing');
    await page.click('form.run-form button.primary');
    await page.waitForSelector('[role=alert]');
    const customer = page.locator('#input_customer');
    expect(await customer.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${await customer.getAttribute('aria-describedby')}`).textContent()).toBe(
      'Enter the customer.',
    );
    expect(await page.locator('#input_ticket').getAttribute('aria-invalid')).toBeNull();
    expect(await page.inputValue('#input_ticket')).toBe('The export button does nothing');
    // After a refusal the skip link leads to the field it names.
    await skipToMainAction();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('input_customer');
    await screenshot(page, 'workflow-run-form-error-desktop');
  });

  it('runs it through the queue; the run page follows the run live to its end: per-node status, timing, usage, output, skipped branch', async () => {
    fake.replies.push({ kind: 'completion', content: 'URGENT: export is broken for Ada', delayMs: 1500 });
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    await page.goto(`${server.baseUrl}/workflows/${triageId}`);
    await page.fill('#input_ticket', 'The export button does nothing');
    await page.fill('#input_customer', 'Ada');
    await page.click('form.run-form button.primary');
    await page.waitForURL((url) => /^\/workflows\/[^/]+\/runs\/run_/.test(url.pathname));
    const runUrl = page.url();
    // Not ended when the page was served: it follows the run without a reload.
    expect(await page.locator('#run-state[data-live]').count()).toBe(1);
    expect(await page.locator('#run-status .badge').textContent()).toMatch(/queued|running/);
    await screenshot(page, 'run-live-desktop');
    await page.waitForSelector('#run-status .badge.status-completed', { timeout: 15_000 });
    expect(page.url()).toBe(runUrl);
    expect(await page.locator('#live-note').count()).toBe(0);
    expect(await page.locator('#run-announce[aria-live=polite]').textContent()).toBe('The run completed.');

    expect(fake.requests.at(-1)?.messages.at(-1)?.content).toBe('Triage for Ada: The export button does nothing');
    const row = (id: string) => page.locator(`tr.step[data-node=${id}]`);
    expect(await row('triage').locator('.badge').textContent()).toBe('completed');
    expect(await row('triage').textContent()).toMatch(/\d+ tokens/);
    expect(await row('triage').locator('td.step-output pre').textContent()).toBe('URGENT: export is broken for Ada');
    expect(await row('acknowledge').locator('.badge').textContent()).toBe('skipped');
    expect(await row('reply').locator('.badge').textContent()).toBe('skipped');
    expect(await page.locator('.graph g.node[data-node=acknowledge]').getAttribute('class')).toContain(
      'status-skipped',
    );
    expect(await page.locator('main').textContent()).toContain('Escalated: URGENT: export is broken for Ada');
    expect(await page.locator('dl.inputs').textContent()).toContain('Ada');
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, 'run-completed-desktop');

    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 900 });
    await page.reload();
    expect(await scrollsSideways(page), 'run page at 390px').toBe(false);
    expect(await page.locator('nav a[aria-current=page]').allTextContents()).toEqual(['Workflows']);
    await screenshot(page, 'run-completed-phone');

    // The workflow's run history and the list's last run show it.
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
    // Keyboard: the skip link leads back to the workflow, where it runs again.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip-link');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('back-to-workflow');
    await page.click('#back-to-workflow');
    const history = page.locator('table.runs tbody tr');
    expect(await history.count()).toBe(1);
    expect(await history.first().locator('.badge').textContent()).toBe('completed');
    await page.goto(`${server.baseUrl}/workflows`);
    expect(
      await page.locator('table.workflows tbody tr', { hasText: 'Ticket triage' }).locator('.badge').textContent(),
    ).toBe('completed');
    expect(unexpectedErrors()).toEqual([]);
  });

  it('follows a run from its event stream, not by polling: a slow step seen running, then its output, timing and usage, without a reload', async () => {
    const chainId = await createWorkflow(api, {
      name: 'Two slow steps',
      nodes: [
        { id: 'question', type: 'text_input', config: { variable: 'question' } },
        { id: 'draft', type: 'llm_call', config: { model: 'llama-3', prompt: 'Draft: {{ inputs.question }}' } },
        { id: 'review', type: 'llm_call', config: { model: 'llama-3', prompt: 'Review: {{ nodes.draft.output }}' } },
        { id: 'answer', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'question', to: 'draft' },
        { from: 'draft', to: 'review' },
        { from: 'review', to: 'answer' },
      ],
    });
    // Each step answers only when the test lets it, so the page is seen mid-run however loaded the
    // machine (fixed delays let a slow page skip past a step's running state).
    const held = () => {
      let resolve!: () => void;
      return { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
    };
    const draftAnswer = held();
    const reviewAnswer = held();
    fake.replies.push(
      { kind: 'completion', content: 'a first draft', until: draftAnswer.promise },
      { kind: 'completion', content: 'reviewed and fine', until: reviewAnswer.promise },
    );
    const requested: string[] = [];
    const onRequest = (request: { url(): string }) => requested.push(new URL(request.url()).pathname);
    page.on('request', onRequest);
    try {
      await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
      await page.goto(`${server.baseUrl}/workflows/${chainId}`);
      await page.fill('#input_question', 'Is the export fixed?');
      const streamed = page.waitForResponse((r) => r.url().endsWith('/events'));
      await page.click('form.run-form button.primary');
      await page.waitForURL((url) => /^\/workflows\/[^/]+\/runs\/run_/.test(url.pathname));
      const runPath = new URL(page.url()).pathname;
      const stream = await streamed;
      expect(stream.url()).toBe(`${server.baseUrl}${runPath}/events`);
      expect(stream.status()).toBe(200);
      expect(stream.headers()['content-type']).toMatch(/^text\/event-stream/);

      const row = (id: string) => page.locator(`tr.step[data-node=${id}]`);
      // The first slow step, running: its row and its box say so, its start time is shown.
      await page.waitForSelector('tr.step[data-node=draft] .badge.status-running');
      expect(await page.locator('.graph g.node[data-node=draft]').getAttribute('class')).toContain('status-running');
      expect(await row('draft').locator('td').nth(2).textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC—$/);
      await screenshot(page, 'run-live-events-desktop');
      draftAnswer.resolve();
      // Then it has completed, with its output, usage and duration, while the second one runs.
      await page.waitForSelector('tr.step[data-node=review] .badge.status-running');
      expect(await row('draft').locator('.badge').textContent()).toBe('completed');
      expect(await row('draft').locator('td.step-output pre').textContent()).toBe('a first draft');
      expect(await row('draft').textContent()).toMatch(/\d+ tokens\d+ in, 3 out/);
      expect(await row('draft').locator('td').nth(2).textContent()).toMatch(/UTC\d+\.\d{2} s$/);
      expect(await page.locator('.graph g.node[data-node=draft] text.node-type').textContent()).toBe(
        'LLM call · completed',
      );
      expect(await page.locator('#run-status .badge').textContent()).toBe('running');
      expect(page.url()).toBe(`${server.baseUrl}${runPath}`);
      // All of that came from the event stream: the state part was not read.
      expect(requested.filter((p) => p.endsWith('/state'))).toEqual([]);
      reviewAnswer.resolve();

      await page.waitForSelector('#run-status .badge.status-completed', { timeout: 15_000 });
      expect(await page.locator('#run-announce').textContent()).toBe('The run completed.');
      expect(await row('review').locator('td.step-output pre').textContent()).toBe('reviewed and fine');
      expect(await page.locator('main').textContent()).toContain('reviewed and fine');
      expect(requested.filter((p) => p === `${runPath}/events`)).toHaveLength(1); // closed at run.finished, not reconnected
      expect(requested.filter((p) => p === `${runPath}/state`).length).toBeLessThanOrEqual(1); // once, for the run's totals
      await screenshot(page, 'run-live-events-completed-desktop');
    } finally {
      page.off('request', onRequest);
      draftAnswer.resolve(); // a failed step above must not leave the run, and the fake, waiting
      reviewAnswer.resolve();
    }
    expect(unexpectedErrors()).toEqual([]);
  });

  it("shows a map's progress in its row as its items end (its items send no events of their own)", async () => {
    const mapId = await createWorkflow(api, {
      name: 'Shout each',
      nodes: [
        { id: 'words', type: 'text_input', config: { variable: 'words' } },
        { id: 'parts', type: 'split', config: { by: 'separator', separator: ',' } },
        {
          id: 'each',
          type: 'map',
          config: {
            concurrency: 1,
            body: {
              nodes: [
                { id: 'word', type: 'text_input', config: { variable: 'item' } },
                { id: 'shout', type: 'llm_call', config: { model: 'llama-3', prompt: '{{ inputs.item }}' } },
                { id: 'out', type: 'text_output', config: { format: 'plain' } },
              ],
              edges: [
                { from: 'word', to: 'shout' },
                { from: 'shout', to: 'out' },
              ],
            },
          },
        },
        { id: 'result', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [
        { from: 'words', to: 'parts' },
        { from: 'parts', to: 'each' },
        { from: 'each', to: 'result' },
      ],
    });
    // Each item's answer waits for the test, so the page is seen between them however slow the machine.
    const gates = new Map<string, () => void>();
    const opened = new Map(['a', 'b', 'c'].map((w) => [w, new Promise<void>((resolve) => gates.set(w, resolve))]));
    fake.answer = (request) => {
      const word = String(request.messages.at(-1)?.content);
      return { kind: 'completion', content: word.toUpperCase(), until: opened.get(word) ?? Promise.resolve() };
    };
    try {
      await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 900 });
      await page.goto(`${server.baseUrl}/workflows/${mapId}`);
      await page.fill('#input_words', 'a,b,c');
      await page.click('form.run-form button.primary');
      await page.waitForURL((url) => /^\/workflows\/[^/]+\/runs\/run_/.test(url.pathname));
      const cell = page.locator('tr.step[data-node=each] td').nth(4);
      await expect.poll(() => cell.textContent(), { timeout: 15_000 }).toBe('0 of 3 items done…');
      gates.get('a')!();
      await expect.poll(() => cell.textContent(), { timeout: 15_000 }).toBe('1 of 3 items done…');
      gates.get('b')!();
      gates.get('c')!();
      await page.waitForSelector('#run-status .badge.status-completed', { timeout: 15_000 });
      expect(await page.locator('main').textContent()).toContain('"C"');
    } finally {
      for (const open of gates.values()) open();
      delete fake.answer;
    }
    expect(unexpectedErrors()).toEqual([]);
  });

  it('without EventSource the run page falls back to reading the state once a second', async () => {
    const context = await browser.newContext({ viewport: { width: SCREEN_WIDTHS.desktop, height: 900 } });
    await context.addCookies(await page.context().cookies());
    const plain = await context.newPage();
    await plain.addInitScript(() => Reflect.deleteProperty(window, 'EventSource'));
    const requested: string[] = [];
    plain.on('request', (request) => requested.push(new URL(request.url()).pathname));
    fake.replies.push({ kind: 'completion', content: 'routine question', delayMs: 1500 });
    await plain.goto(`${server.baseUrl}/workflows/${triageId}`);
    await plain.fill('#input_ticket', 'How do I export?');
    await plain.fill('#input_customer', 'Di');
    await plain.click('form.run-form button.primary');
    await plain.waitForURL((url) => url.pathname.includes('/runs/run_'));
    await plain.waitForSelector('#run-status .badge.status-completed', { timeout: 15_000 });
    expect(await plain.locator('#run-announce').textContent()).toBe('The run completed.');
    expect(await plain.locator('main').textContent()).toContain('Thanks, Di: <we are on it>');
    expect(requested.filter((p) => p.endsWith('/state')).length).toBeGreaterThanOrEqual(1);
    expect(requested.filter((p) => p.endsWith('/events'))).toEqual([]);
    await context.close();
  });

  it('served by a process with no queue, the run page falls back to reading the state (its event stream answers 503)', async () => {
    // The run is executed by the first server's worker; the page is served by a second process on
    // the same store that has no queue, as an operator may run a web-only instance.
    const webOnly = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    const context = await browser.newContext({ viewport: { width: SCREEN_WIDTHS.desktop, height: 900 } });
    try {
      await context.addCookies(await page.context().cookies());
      const plain = await context.newPage();
      const answered: Array<[string, number]> = [];
      plain.on('response', (response) => answered.push([new URL(response.url()).pathname, response.status()]));
      let navigations = 0;
      plain.on('framenavigated', (frame) => frame === plain.mainFrame() && navigations++);
      fake.replies.push({ kind: 'completion', content: 'routine question', delayMs: 2000 });
      const started = await api.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: triageId } },
        body: { inputs: { ticket: 'Where is my invoice?', customer: 'Eve' } },
      });
      const runPath = `/workflows/${triageId}/runs/${started.data!.data.id}`;
      await plain.goto(`${webOnly.baseUrl}${runPath}`);
      expect(await plain.locator('#run-status .badge').textContent()).toMatch(/^(queued|running)$/);
      await plain.waitForSelector('#run-status .badge.status-completed', { timeout: 15_000 });
      expect(await plain.locator('#run-announce').textContent()).toBe('The run completed.');
      expect(await plain.locator('main').textContent()).toContain('Thanks, Eve: <we are on it>');
      expect(answered).toContainEqual([`${runPath}/events`, 503]);
      expect(
        answered.filter(([p, status]) => p === `${runPath}/state` && status === 200).length,
      ).toBeGreaterThanOrEqual(1);
      expect(navigations).toBe(1); // updated in place, not reloaded
    } finally {
      await context.close();
      await webOnly.close();
    }
  });

  it("a run's event stream is the signed-in user's own: another user's run, or a run under the wrong workflow, is a 404", async () => {
    const started = await othersApi.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: othersId } },
      body: { inputs: { ticket: 'theirs' } },
    });
    const theirRun = started.data!.data.id;
    const mine = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: triageId } } });
    const myRun = mine.data!.data[0]!.id;
    expect((await page.request.get(`${server.baseUrl}/workflows/${othersId}/runs/${theirRun}/events`)).status()).toBe(
      404,
    );
    expect((await page.request.get(`${server.baseUrl}/workflows/${othersId}/runs/${myRun}/events`)).status()).toBe(404);
    expect((await page.request.get(`${server.baseUrl}/workflows/${triageId}/runs/${theirRun}/events`)).status()).toBe(
      404,
    );
    // Mine, ended: its events replayed to run.finished, and the stream ends.
    const own = await page.request.get(`${server.baseUrl}/workflows/${triageId}/runs/${myRun}/events`);
    expect(own.status()).toBe(200);
    expect(await own.text()).toMatch(/event: run\.finished\ndata: \{[^\n]*"id":"run_/);
    // Signed out: the login page, never the stream.
    const anonymous = await browser.newContext();
    const signedOut = await anonymous.request.get(`${server.baseUrl}/workflows/${triageId}/runs/${myRun}/events`, {
      maxRedirects: 0,
    });
    expect(signedOut.status()).toBe(303);
    expect(signedOut.headers().location).toMatch(/^\/login/);
    await anonymous.close();
  });

  it("shows a failed node's error, and the nodes the run never reached", async () => {
    fake.replies.push({
      kind: 'error',
      status: 400,
      message: 'The model refused <this> prompt',
      type: 'invalid_request_error',
    });
    await page.goto(`${server.baseUrl}/workflows/${triageId}`);
    await page.fill('#input_ticket', 'Anything');
    await page.fill('#input_customer', 'Bob');
    await page.click('form.run-form button.primary');
    await page.waitForSelector('#run-status .badge.status-failed', { timeout: 15_000 });
    const triage = page.locator('tr.step[data-node=triage]');
    expect(await triage.locator('.badge').textContent()).toBe('failed');
    expect(await triage.locator('.error').textContent()).toContain('The model refused <this> prompt');
    expect(await page.locator('#run-state > .error[role=alert]').textContent()).toContain('triage');
    expect(await page.locator('tr.step[data-node=escalate] .badge').textContent()).toMatch(/not started|skipped/);
    await screenshot(page, 'run-failed-desktop');
  });

  it('works without JavaScript: the run form posts, the run page shows the state, a reload shows the end', async () => {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: SCREEN_WIDTHS.phone, height: 900 },
    });
    await context.addCookies(await page.context().cookies());
    const plain = await context.newPage();
    fake.replies.push({ kind: 'completion', content: 'routine question', delayMs: 300 });
    await plain.goto(`${server.baseUrl}/workflows/${triageId}`);
    await plain.fill('#input_ticket', 'How do I export?');
    await plain.fill('#input_customer', 'Cy');
    await plain.click('form.run-form button.primary');
    await plain.waitForURL((url) => url.pathname.includes('/runs/run_'));
    await expect
      .poll(
        async () => {
          await plain.reload();
          return plain.locator('#run-status .badge').textContent();
        },
        { timeout: 15_000 },
      )
      .toBe('completed');
    expect(await plain.locator('tr.step[data-node=escalate] .badge').textContent()).toBe('skipped');
    expect(await plain.locator('main').textContent()).toContain('Thanks, Cy: <we are on it>');
    await screenshot(plain, 'run-no-script-phone');
    await context.close();
  });

  it("another user's workflow or run is a 404 page, as is a run under the wrong workflow", async () => {
    const response = await page.goto(`${server.baseUrl}/workflows/${othersId}`);
    expect(response?.status()).toBe(404);
    expect(await page.textContent('h1')).toBe('Not found');
    const runs = await api.GET('/api/workflows/{workflow_id}/runs', { params: { path: { workflow_id: triageId } } });
    const runId = runs.data!.data[0]!.id;
    expect((await page.goto(`${server.baseUrl}/workflows/${othersId}/runs/${runId}`))?.status()).toBe(404);
    expect((await page.goto(`${server.baseUrl}/workflows/${triageId}/runs/run_nope`))?.status()).toBe(404);
    expect((await page.goto(`${server.baseUrl}/workflows/${triageId}/runs/${runId}`))?.status()).toBe(200);
  });
});
