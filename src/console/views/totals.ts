import { html, type Html } from '../../html/html.ts';
import type { TotalPeriod, WorkflowTotals } from '../../runs/totals.ts';
import { formatMoney, formatTokens } from '../format.ts';

// A workflow's totals on its page: runs, tokens and cost over the last day, week or month, the
// period chosen by a link (`?period=24h`), so it works without script.

const PERIOD_WORDS: Record<TotalPeriod, string> = {
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

export function totalsSection(workflowId: string, totals: WorkflowTotals): Html {
  const link = (period: TotalPeriod) =>
    html`<a href="/workflows/${workflowId}?period=${period}#totals-heading"${period === totals.period ? html` aria-current="true"` : ''}>${PERIOD_WORDS[period]}</a>`;
  const cost = totals.costs.length
    ? totals.costs.map((c, i) => html`${i ? ' + ' : ''}${formatMoney(c.total, c.currency)}`)
    : html`<small>none (no priced model)</small>`;
  return html`<section aria-labelledby="totals-heading" id="totals"><h2 id="totals-heading">Totals</h2>
<nav class="period-filter" aria-label="Totals over">${(['24h', '7d', '30d'] as const).map((p) => html`${link(p)} `)}</nav>
<dl class="facts" data-totals="${totals.period}"><div><dt>Runs</dt><dd data-field="runs">${formatTokens(totals.runs)}</dd></div><div><dt>Tokens</dt><dd data-field="tokens">${formatTokens(totals.tokens)}</dd></div><div><dt>Cost</dt><dd data-field="cost">${cost}</dd></div></dl>
<p><small>${PERIOD_WORDS[totals.period]}, runs started then (a run's tokens and cost count once it has ended).</small></p></section>`;
}
