import { html, type Html } from '../../html/html.ts';
import { formatDuration, statusWords } from '../format.ts';
import { nodeTypeLabel } from './graphSvg.ts';
import { nodeAnchor } from './nodeInspector.ts';
import type { Segment, Timeline, TimelineRow } from './timelineModel.ts';

// A run's timeline on its page: a row per node with bars on one time axis (HTML boxes placed in
// per cent of the run's span, so it fits any width, a phone's too), the slowest node marked and
// every row's time written beside its bar; then the same times as a table, for a screen reader
// and for copying. Without script it is complete; the run page's script swaps it for a fresh copy
// (`data-timeline`, from `.../timeline`) when a node starts, ends, waits or is retried while the run goes on.

const KIND_WORDS: Record<Segment['kind'], string> = {
  queued: 'queued',
  running: 'running',
  retry: 'waiting to retry',
  waiting: 'waiting for an answer',
};

/** A share of the axis as a CSS percentage, to the hundredth. */
const percent = (value: number, span: number): string => `${((100 * value) / span).toFixed(2)}%`;

/** Seconds from the run's creation: `+1.20 s`. */
const offset = (t: number, origin: number): string => `+${formatDuration((t - origin) / 1000)}`;

/** What a segment is, in words: `attempt 2`, `waiting to retry (attempt 3)`. */
function segmentWords(s: Segment): string {
  if (s.kind === 'running' && s.attempt) return `attempt ${s.attempt}`;
  if (s.kind === 'retry' && s.attempt) return `${KIND_WORDS.retry} (attempt ${s.attempt})`;
  return KIND_WORDS[s.kind];
}

/** What a row says beside its name: its attempts and items. */
const rowFacts = (row: TimelineRow): string =>
  [
    row.attempts ? `${row.attempts} attempts` : '',
    row.items ? `${row.items}${row.itemsCut ? '+' : ''} ${itemWord(row)}` : '',
  ]
    .filter(Boolean)
    .join(', ');

/** What a row's numbered parts are: a map's items, an agent's tool calls. */
const itemWord = (row: TimelineRow): string => (row.children?.some((c) => c.type === 'call') ? 'calls' : 'items');

/** A child row's label: `item`, `tool call`, or a called workflow's node's type. */
const childLabel = (row: TimelineRow): string =>
  row.type === 'item' ? 'item' : row.type === 'call' ? 'tool call' : nodeTypeLabel(row.type);

function bars(row: TimelineRow, timeline: Timeline, status: string): Html {
  const span = Math.max(1, timeline.end - timeline.origin);
  return html`${row.segments.map((s) => {
    const cls = s.kind === 'running' ? `tl-running status-${status}` : `tl-${s.kind}`;
    return html`<span class="tl-bar ${cls}" data-segment="${s.kind}"${s.attempt ? html` data-attempt="${String(s.attempt)}"` : ''} style="left:${percent(s.from - timeline.origin, span)};width:${percent(s.to - s.from, span)}"></span>`;
  })}`;
}

const isChild = (row: TimelineRow): boolean => row.child === true || row.type === 'item' || row.type === 'call';

/** A row and its items' rows under it. */
const chartRows = (row: TimelineRow, timeline: Timeline): Html =>
  html`${chartRow(row, timeline)}${(row.children ?? []).map((item) => chartRow(item, timeline))}${moreItems(row)}`;

/** Under a map's rows, how many items were not drawn. */
function moreItems(row: TimelineRow): Html {
  const more = (row.items ?? 0) - (row.children ?? []).filter((c) => !c.child).length;
  return more > 0 || row.itemsCut
    ? html`<div class="tl-row tl-item"><span class="tl-name"><small>${more > 0 ? `and ${more} more ${itemWord(row)}` : `and more ${itemWord(row)}`} (the API's steps list them all)</small></span></div>`
    : html``;
}

function chartRow(row: TimelineRow, timeline: Timeline, isRun = false): Html {
  const slowest = !isRun && row.id === timeline.slowest;
  const facts = rowFacts(row);
  const name = isRun
    ? html`<strong>Run</strong>`
    : isChild(row)
      ? html`<code>${row.id}</code> <small>${childLabel(row)}</small>`
      : html`<code>${row.id}</code> <small>${nodeTypeLabel(row.type)}${facts ? ` · ${facts}` : ''}</small>`;
  const took = row.took === null ? html`<small>${row.note ?? '—'}</small>` : formatDuration(row.took / 1000);
  return html`<div class="tl-row${slowest ? ' tl-slowest' : ''}${isRun ? ' tl-run' : ''}${isChild(row) ? ' tl-item' : ''}" data-timeline-row="${isRun ? 'run' : row.id}"><span class="tl-name">${name}${slowest ? html` <span class="tl-flag">slowest</span>` : ''}</span>
<span class="tl-track">${bars(row, timeline, row.status)}</span><span class="tl-took" data-field="took">${took}</span></div>`;
}

/** The axis under the bars: 0, a quarter, half, three quarters and the whole span. */
function axis(timeline: Timeline): Html {
  const span = timeline.end - timeline.origin;
  return html`<div class="tl-row tl-axis" aria-hidden="true"><span class="tl-name"></span><span class="tl-track">${[
    0, 0.25, 0.5, 0.75, 1,
  ].map(
    (share) =>
      html`<span class="tl-tick" style="left:${(share * 100).toFixed(0)}%">${formatDuration((share * span) / 1000)}</span>`,
  )}</span><span class="tl-took"></span></div>`;
}

function tableRow(row: TimelineRow, timeline: Timeline, isRun = false): Html {
  const spans = row.segments.map(
    (s) =>
      html`<li>${segmentWords(s)}: ${offset(s.from, timeline.origin)} to ${offset(s.to, timeline.origin)} (${formatDuration((s.to - s.from) / 1000)})</li>`,
  );
  const facts = rowFacts(row);
  return html`<tr data-timeline-times="${isRun ? 'run' : row.id}"><th scope="row">${isRun ? 'The run' : html`<code>${row.id}</code>`}${!isRun && row.id === timeline.slowest ? ' (slowest)' : ''}${facts ? html`<br><small>${facts}</small>` : ''}</th>
<td>${statusWords(row.status)}</td><td>${row.took === null ? '—' : formatDuration(row.took / 1000)}</td><td>${spans.length ? html`<ul>${spans}</ul>` : (row.note ?? '—')}</td></tr>`;
}

/** The run's timeline: bars, a legend, and the same times as a table. */
export function timelineSection(timeline: Timeline, runId: string): Html {
  const slowest = timeline.rows.find((r) => r.id === timeline.slowest);
  const total = formatDuration((timeline.end - timeline.origin) / 1000);
  const summary = html`From the run's creation to ${total}.${
    slowest && slowest.took !== null
      ? html` Slowest node: <a href="#${nodeAnchor(slowest.id)}"><code>${slowest.id}</code></a>, ${formatDuration(slowest.took / 1000)}.`
      : ''
  }`;
  const kinds = ['queued', 'running', 'retry', 'waiting'] as const;
  return html`<section class="timeline" aria-labelledby="timeline-heading" data-timeline><h2 id="timeline-heading">Timeline</h2>
<p class="tl-summary">${summary}</p>
<div class="tl-chart" role="img" aria-label="Timeline of run ${runId}: the table after it gives every time.">${chartRow(timeline.run, timeline, true)}${timeline.rows.map((r) => chartRows(r, timeline))}${axis(timeline)}</div>
<ul class="tl-legend" aria-hidden="true">${kinds.map((k) => html`<li><span class="tl-key tl-${k === 'running' ? 'running status-completed' : k}"></span>${KIND_WORDS[k]}</li>`)}</ul>
<details class="tl-times"><summary>The timeline as a table</summary><table><caption>Times from the run's creation</caption><thead><tr><th scope="col">Node</th><th scope="col">Status</th><th scope="col">Took</th><th scope="col">Spans</th></tr></thead>
<tbody>${tableRow(timeline.run, timeline, true)}${timeline.rows.map((r) => html`${tableRow(r, timeline)}${(r.children ?? []).map((item) => tableRow(item, timeline))}`)}</tbody></table></details></section>`;
}
