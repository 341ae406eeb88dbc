import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createUser } from '../accounts/users.ts';
import { appendRunEvents, type NewRunEvent } from '../runs/events.ts';
import { newRunId } from '../runs/service.ts';
import { runsStore } from '../runs/runsStore.ts';
import { createWorkflow } from '../workflows/service.ts';

// A run's timeline on its page, over HTTP on each store: a run stored as a worker leaves it (its
// steps and the events of its starts, retry and wait) at chosen times, so every bar's place and
// width is known: a row per node, widths in proportion to the times, the retry's wait and the
// approval's wait drawn, the slowest node marked, and the same times as a table.

const graph = {
  nodes: [
    { id: 'ticket', type: 'text_input' as const, config: { variable: 'ticket' } },
    { id: 'summarise', type: 'llm_call' as const, config: { model: 'echo' } },
    { id: 'review', type: 'approval' as const, config: { message: 'OK?' } },
    { id: 'result', type: 'text_output' as const, config: { format: 'plain' as const } },
    { id: 'unused', type: 'template' as const, config: { template: 'never' } },
  ],
  edges: [
    { from: 'ticket', to: 'summarise' },
    { from: 'summarise', to: 'review' },
    { from: 'review', to: 'result' },
  ],
};

/** The bars of a node's row, in order: kind, left and width (per cent). */
function barsOf(page: string, row: string): Array<{ kind: string; left: number; width: number; attempt?: number }> {
  const start = page.indexOf(`data-timeline-row="${row}"`);
  const end = page.indexOf('</div>', start);
  expect(start, `row ${row}`).toBeGreaterThan(-1);
  const bars = [
    ...page
      .slice(start, end)
      .matchAll(/data-segment="(\w+)"(?: data-attempt="(\d+)")? style="left:([\d.]+)%;width:([\d.]+)%"/g),
  ];
  return bars.map(([, kind, attempt, left, width]) => ({
    kind: kind!,
    left: Number(left),
    width: Number(width),
    ...(attempt ? { attempt: Number(attempt) } : {}),
  }));
}

describe.each(testDialects())('run timeline (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let workflowId: string;
  let runId: string;
  let otherRun: string;
  let otherWorkflow: string;

  /** Stores a run created at `t0` as a worker would have left it; returns its id. */
  async function storeRun(userId: number, wf: string, t0: number, steps: object[], events: object[]): Promise<string> {
    const db = server.ctx.db;
    const id = newRunId();
    await runsStore(db).start({
      id,
      workflow_id: wf,
      user_id: userId,
      status: 'completed',
      inputs: JSON.stringify({ ticket: 'Refund' }),
      graph: JSON.stringify({ version: 1, ...graph }),
      output: JSON.stringify({ result: 'ok' }),
      error: null,
      usage: JSON.stringify({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }),
      idempotency_key: null,
      attempts: 1,
      created_at: t0,
      started_at: t0 + 2000,
      finished_at: t0 + 20_000,
      duration_ms: 18_000,
    });
    const none = {
      input_preview: null,
      output_preview: null,
      truncated: false,
      output_json: false,
      usage: null,
      error: null,
    };
    for (const step of steps) await db('run_steps').insert({ run_id: id, ...none, ...step });
    await appendRunEvents(db, id, events as NewRunEvent[], t0 + 20_000); // all written at the end, as a quick run's are
    return id;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const me = await createUser(server.ctx, { login: 'timer', password: 'test-password-1' });
    const them = await createUser(server.ctx, { login: 'other', password: 'test-password-2' });
    workflowId = (await createWorkflow(server.ctx, me.id, { name: 'Timed', ...graph })).id;
    otherWorkflow = (await createWorkflow(server.ctx, them.id, { name: 'Theirs', ...graph })).id;
    const t0 = Date.now() - 60_000;
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const step = (node_id: string, node_type: string, from: number, to: number, more: object = {}) => ({
      node_id,
      node_type,
      status: 'completed',
      started_at: t0 + from,
      finished_at: t0 + to,
      ...more,
    });
    // Queued 2 s of 20; summarise: attempt 1 for 2 s, 2 s waiting to retry, attempt 2 for 4 s;
    // review waits 4 s for its answer (logged afresh when answered); result queued 2 s.
    const steps = [
      step('ticket', 'text_input', 2000, 2000),
      step('summarise', 'llm_call', 2000, 10_000, {
        attempts: 2,
        usage: JSON.stringify({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }),
      }),
      step('review', 'approval', 14_000, 14_000),
      step('result', 'text_output', 16_000, 16_000),
      { node_id: 'unused', node_type: 'template', status: 'skipped', started_at: null, finished_at: null },
    ];
    const events = [
      { type: 'node.started', data: { node_id: 'ticket', started_at: at(2000) } },
      { type: 'node.started', data: { node_id: 'summarise', started_at: at(2000) } },
      {
        type: 'node.retry',
        data: {
          node_id: 'summarise',
          attempt: 2,
          error: { code: 'provider_error', message: '500' },
          delay_ms: 2000,
          failed_at: at(4000),
        },
      },
      { type: 'node.delta', data: { node_id: 'summarise', text: 'ok' } },
      { type: 'node.started', data: { node_id: 'review', started_at: at(10_000) } },
      { type: 'node.waiting', data: { node_id: 'review', message: 'OK?' } },
      { type: 'node.started', data: { node_id: 'review', started_at: at(14_000) } },
      { type: 'node.started', data: { node_id: 'result', started_at: at(16_000) } },
    ];
    runId = await storeRun(me.id, workflowId, t0, steps, events);
    otherRun = await storeRun(them.id, otherWorkflow, t0, steps, events);
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'timer', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  it('draws a row per node with bars in proportion to their times: queued, each attempt, the retry wait, the approval wait', async () => {
    const res = await browser.fetch(`/workflows/${workflowId}/runs/${runId}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<h2 id="timeline-heading">Timeline</h2>');
    for (const id of ['run', 'ticket', 'summarise', 'review', 'result', 'unused'])
      expect(page).toContain(`data-timeline-row="${id}"`);

    expect(barsOf(page, 'run')).toEqual([
      { kind: 'queued', left: 0, width: 10 },
      { kind: 'running', left: 10, width: 40 },
      { kind: 'waiting', left: 50, width: 20 },
      { kind: 'running', left: 70, width: 30 },
    ]);
    expect(barsOf(page, 'summarise')).toEqual([
      { kind: 'running', left: 10, width: 10, attempt: 1 },
      { kind: 'retry', left: 20, width: 10, attempt: 2 },
      { kind: 'running', left: 30, width: 20, attempt: 2 },
    ]);
    expect(barsOf(page, 'review')).toEqual([
      { kind: 'waiting', left: 50, width: 20 },
      { kind: 'running', left: 70, width: 0 },
    ]);
    // Its input ended at 14 s, it started at 16 s: queued 2 s.
    expect(barsOf(page, 'result')).toEqual([
      { kind: 'queued', left: 70, width: 10 },
      { kind: 'running', left: 80, width: 0 },
    ]);
    expect(barsOf(page, 'unused')).toEqual([]);
  });

  it('marks the slowest node and labels every duration; the table gives the same times in words', async () => {
    const page = await (await browser.fetch(`/workflows/${workflowId}/runs/${runId}`)).text();
    expect(page).toMatch(/class="tl-row tl-slowest" data-timeline-row="summarise"/);
    expect(page.match(/tl-slowest/g)).toHaveLength(1);
    expect(page).toContain('Slowest node: <a href="#node-summarise"><code>summarise</code></a>, 8.00 s.');
    expect(page).toContain('2 attempts');
    const row = page.slice(page.indexOf('data-timeline-times="summarise"'));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain(
      '<li>attempt 1: +2.00 s to +4.00 s (2.00 s)</li><li>waiting to retry (attempt 2): +4.00 s to +6.00 s (2.00 s)</li><li>attempt 2: +6.00 s to +10 s (4.00 s)</li>',
    );
    const review = page.slice(page.indexOf('data-timeline-times="review"'));
    expect(review.slice(0, review.indexOf('</tr>'))).toContain(
      '<li>waiting for an answer: +10 s to +14 s (4.00 s)</li>',
    );
    const unused = page.slice(page.indexOf('data-timeline-times="unused"'));
    expect(unused.slice(0, unused.indexOf('</tr>'))).toContain('<td>skipped</td>');
  });

  it("serves the timeline alone for the live page; another user's run is a 404 there too", async () => {
    const res = await browser.fetch(`/workflows/${workflowId}/runs/${runId}/timeline`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-run-status')).toBe('completed');
    const part = await res.text();
    expect(part).toMatch(/^<section class="timeline"/);
    expect(barsOf(part, 'summarise')).toHaveLength(3);
    expect((await browser.fetch(`/workflows/${otherWorkflow}/runs/${otherRun}/timeline`)).status).toBe(404);
    expect((await browser.fetch(`/workflows/${workflowId}/runs/${otherRun}/timeline`)).status).toBe(404);
    expect((await browser.fetch(`/workflows/${workflowId}/runs/run_nope/timeline`)).status).toBe(404);
  });
});
