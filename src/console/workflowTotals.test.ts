import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, logIn } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createUser } from '../accounts/users.ts';
import { newRunId } from '../runs/service.ts';
import { runsStore } from '../runs/runsStore.ts';
import { createWorkflow } from '../workflows/service.ts';

// A workflow's totals on its page, over HTTP on each store: runs created in the last 24 hours, 7
// days or 30 days (chosen by a link), their tokens (from each run's usage) and their cost (summed
// in integer billionths, per currency), another user's runs and other workflows' left out; and
// the run history's cost column.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(testDialects())('workflow totals (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  let workflowId: string;
  let myId: number;

  /** Stores an ended run created `ago` ms before now, with its tokens and cost. */
  async function storeRun(
    userId: number,
    wf: string,
    ago: number,
    tokens: number | null,
    cost?: { nanos: number; currency: string },
  ): Promise<string> {
    const id = newRunId();
    const at = Date.now() - ago;
    await runsStore(server.ctx.db).start({
      id,
      workflow_id: wf,
      user_id: userId,
      status: 'completed',
      inputs: '{}',
      graph: JSON.stringify({ version: 1, ...seedGraph() }),
      output: '{}',
      error: null,
      usage:
        tokens === null
          ? null
          : JSON.stringify({ prompt_tokens: tokens - 1, completion_tokens: 1, total_tokens: tokens }),
      idempotency_key: null,
      attempts: 1,
      created_at: at,
      started_at: at,
      finished_at: at + 1000,
      duration_ms: 1000,
    });
    if (cost)
      await server.ctx
        .db('runs')
        .where({ id })
        .update({ cost_nanos: cost.nanos, cost_input_nanos: Math.floor(cost.nanos / 2), cost_currency: cost.currency });
    return id;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const me = await createUser(server.ctx, { login: 'counter', password: 'test-password-1' });
    myId = me.id;
    const them = await createUser(server.ctx, { login: 'other', password: 'test-password-2' });
    workflowId = (await createWorkflow(server.ctx, me.id, { name: 'Counted', ...seedGraph() })).id;
    const second = (await createWorkflow(server.ctx, me.id, { name: 'Second', ...seedGraph() })).id;
    const theirs = (await createWorkflow(server.ctx, them.id, { name: 'Theirs', ...seedGraph() })).id;
    const usd = (nanos: number) => ({ nanos, currency: 'USD' });
    await storeRun(me.id, workflowId, 1 * HOUR, 100, usd(120_000)); // $0.00012
    await storeRun(me.id, workflowId, 2 * HOUR, 50, usd(1_500_000_000)); // $1.50
    await storeRun(me.id, workflowId, 3 * HOUR, null); // not ended: no tokens yet, no cost
    await storeRun(me.id, workflowId, 3 * DAY, 1000, usd(2_000_000_000));
    await storeRun(me.id, workflowId, 3 * DAY, 7, { nanos: 3_000_000_000, currency: 'EUR' }); // the table's currency changed
    await storeRun(me.id, workflowId, 20 * DAY, 10_000); // no priced model
    await storeRun(me.id, workflowId, 40 * DAY, 99_999, usd(9_000_000_000)); // before every period
    await storeRun(me.id, second, 1 * HOUR, 5000, usd(5_000_000_000));
    await storeRun(them.id, theirs, 1 * HOUR, 5000, usd(5_000_000_000));
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'counter', 'test-password-1', '/workflows')).status).toBe(303);
  });
  afterAll(() => server.close());

  /** The totals a page shows: period, runs, tokens and cost, as text. */
  async function totals(query = ''): Promise<Record<string, string>> {
    const res = await browser.fetch(`/workflows/${workflowId}${query}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    const section = page.slice(page.indexOf('data-totals='), page.indexOf('</dl>', page.indexOf('data-totals=')));
    const field = (name: string) =>
      new RegExp(`data-field="${name}">(.*?)</dd>`).exec(section)![1]!.replace(/<[^>]+>/g, '');
    return {
      period: /data-totals="(\w+)"/.exec(section)![1]!,
      runs: field('runs'),
      tokens: field('tokens'),
      cost: field('cost'),
    };
  }

  it('sums the runs, tokens and cost of the last 7 days by default, per currency', async () => {
    expect(await totals()).toEqual({ period: '7d', runs: '5', tokens: '1,157', cost: '€3.00 + $3.50' });
  });

  it('takes the last 24 hours or 30 days from its links, and anything else as the default', async () => {
    expect(await totals('?period=24h')).toEqual({ period: '24h', runs: '3', tokens: '150', cost: '$1.50' });
    expect(await totals('?period=30d')).toEqual({
      period: '30d',
      runs: '6',
      tokens: '11,157',
      cost: '€3.00 + $3.50',
    });
    expect((await totals('?period=1y')).period).toBe('7d');
    expect((await totals('?period[]=24h')).period).toBe('7d');
    const page = await (await browser.fetch(`/workflows/${workflowId}?period=24h`)).text();
    expect(page).toContain(
      `<a href="/workflows/${workflowId}?period=24h#totals-heading" aria-current="true">Last 24 hours</a>`,
    );
    expect(page).toContain(`<a href="/workflows/${workflowId}?period=30d#totals-heading">Last 30 days</a>`);
  });

  it("shows each run's cost in the history, and on a run's page its cost and each node's beside their tokens", async () => {
    const runId = await storeRun(myId, workflowId, 10 * 60_000, 42, { nanos: 2_500_000, currency: 'USD' });
    await server.ctx.db('run_steps').insert({
      run_id: runId,
      node_id: 'summarise',
      node_type: 'llm_call',
      status: 'completed',
      started_at: Date.now() - 600_000,
      finished_at: Date.now() - 599_000,
      input_preview: null,
      output_preview: 'ok',
      truncated: false,
      output_json: false,
      usage: JSON.stringify({ prompt_tokens: 41, completion_tokens: 1, total_tokens: 42 }),
      error: null,
      cost_nanos: 2_500_000,
      cost_input_nanos: 2_000_000,
      cost_currency: 'USD',
    });
    const history = await (await browser.fetch(`/workflows/${workflowId}`)).text();
    expect(history).toContain('<th>Tokens</th><th>Cost</th>');
    expect(history).toContain('<td data-field="cost">$0.0025<span class="cell-label"> cost</span></td>');
    expect(history).toContain('<td data-field="cost"><small>—</small><span class="cell-label"> cost</span></td>'); // the unpriced run

    const page = await (await browser.fetch(`/workflows/${workflowId}/runs/${runId}`)).text();
    expect(page).toContain('<dd id="run-cost">$0.0025 <small>($0.00125 in, $0.00125 out)</small></dd>');
    const row = page.slice(page.indexOf('data-step="summarise"'));
    expect(row.slice(0, row.indexOf('</tr>'))).toMatch(
      /data-field="usage">42<span class="cell-label"> tokens<\/span><br><small>41 in, 1 out<\/small><br><small data-field="cost">\$0\.0025<\/small>/,
    );
  });

  it('says so when no run of the period had a priced model', async () => {
    const { id } = await createWorkflow(server.ctx, myId, { name: 'Unpriced', ...seedGraph() });
    const page = await (await browser.fetch(`/workflows/${id}`)).text();
    expect(page).toMatch(/data-field="runs">0<\/dd>.*data-field="tokens">0<\/dd>.*none \(no priced model\)/s);
  });
});
