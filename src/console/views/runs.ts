import type { GraphSnapshot, RunDetail, RunMark, RunStep } from '../../runs/service.ts';
import type { Workflow } from '../../workflows/service.ts';
import { html, type Html } from '../../html/html.ts';
import { formatDuration, formatMoney, isoDate, secondsBetween, tokenSplit } from '../format.ts';
import type { PageUser } from './format.ts';
import { waitingForms } from './approval.ts';
import { graphSvg, nodeTypeLabel } from './graphSvg.ts';
import { layout } from '../../html/layout.ts';
import { callSteps, nodeAnchor, stepDetails } from './nodeInspector.ts';
import { findNodeDefinition } from '../../nodes/registry.ts';
import { runControls } from './runControls.ts';
import { statusBadge, WORKFLOWS_NAV } from './workflows.ts';
import { timelineSection } from './timeline.ts';
import { runTimeline } from './timelineModel.ts';
import { chosenCase } from './chosenCase.ts';

// A run's page: per-node status, timing, usage and output, the run's inputs and final output.
// While the run is queued or running, /assets/console.js follows the run's event stream
// (`.../events`, an EventSource) and updates each node's row and box as its events arrive (a row
// is `data-step`, its cells `data-field`: the script finds them by name, never by position); at the
// run's end it reads the state part once (`.../state`, the same markup alone). Without
// EventSource, or when the stream fails, it reads `.../state` once a second instead. Without
// script the page is complete as it stands and a reload shows the state.

const ENDED = ['completed', 'failed', 'cancelled'];

export const runEnded = (run: RunDetail) => ENDED.includes(run.status);

/** Text as written, whitespace kept; a JSON value pretty-printed. */
const textBlock = (value: unknown): Html =>
  html`<pre>${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>`;

/** A step's cost under its tokens (`$0.00012`); nothing when it has none (no priced model). */
const costLine = (cost: RunStep['cost']): Html =>
  cost ? html`<br><small data-field="cost">${formatMoney(cost.total, cost.currency)}</small>` : html``;

/**
 * Where a step's time ends: its own end, but never after the run's (a cancel ends the run at once;
 * its worker logs the node it stopped when it notices, later).
 */
const stepEnd = (step: RunStep, run: RunDetail): string | null =>
  step.finished_at && run.finished_at && Date.parse(step.finished_at) > Date.parse(run.finished_at)
    ? run.finished_at
    : step.finished_at;

/** A node's row: its log if it has one; otherwise what the run's state says happened to it. */
function nodeRow(
  node: GraphSnapshot['nodes'][number],
  step: RunStep | undefined,
  run: RunDetail,
  edges: GraphSnapshot['edges'],
  taken?: string,
): Html {
  const calls = findNodeDefinition(node.type)?.listsCalls ? callSteps(node.id, run.logs) : '';
  const status = step?.status ?? (runEnded(run) ? (run.status === 'completed' ? 'skipped' : 'not_started') : 'pending');
  const usage = step?.usage
    ? html`${step.usage.total_tokens}<span class="cell-label"> tokens</span><br><small>${tokenSplit(step.usage)}</small>${costLine(step.cost)}`
    : html`<small>—</small>`;
  let detail: Html;
  if (step?.error)
    detail = html`<div class="error"><p><strong>${step.error.code}</strong>: ${step.error.message}</p></div>${step.output ? textBlock(step.output) : ''}`;
  else if (status === 'skipped') detail = html`<small>Skipped: on a branch not taken.</small>`;
  else if (status === 'not_started') detail = html`<small>Not started: the run ended first.</small>`;
  else if (step?.output !== null && step?.output !== undefined)
    detail = html`${taken !== undefined ? html`<p data-field="case">Took case <code>${taken}</code></p>` : ''}${textBlock(step.output)}`;
  else detail = html`<small>${status === 'running' ? 'Working…' : '—'}</small>`;
  return html`<tr data-step="${node.id}" data-node="${node.id}" id="${nodeAnchor(node.id)}" tabindex="-1" class="step status-${status}"><td><strong>${node.id}</strong><br><small>${nodeTypeLabel(node.type)}</small>${stepDetails(node, step, edges)}${calls}</td>
<td data-field="status">${statusBadge(status)}${step?.attempts && step.attempts > 1 ? html`<br><small>after ${step.attempts} attempts</small>` : ''}${step?.reused_from ? html`<br><small data-reused>reused from the run retried</small>` : ''}</td><td data-field="time">${step?.started_at ? html`<small>${isoDate(step.started_at)}</small><br>${formatDuration(secondsBetween(step.started_at, stepEnd(step, run)))}` : html`<small>—</small>`}</td>
<td data-field="usage">${usage}</td><td class="step-output" data-field="output">${detail}${step?.truncated ? html`<p><small>Cut at 200,000 characters.</small></p>` : ''}</td></tr>`;
}

export interface RunModel {
  workflowId: string;
  /** The workflow's name now (the run ran its snapshot, which may be an older version). */
  workflowName: string;
  run: RunDetail;
  graph: GraphSnapshot;
  /** The nodes' starts, retries and waits from the run's events, and the time now: its timeline. */
  marks?: readonly RunMark[];
  now?: number;
}

/** The run's timeline, when its model has the marks to draw it. */
export const runTimelineOf = ({ run, graph, marks, now }: RunModel): Html =>
  marks ? timelineSection(runTimeline(run, graph, marks, now ?? Date.now()), run.id) : html``;

/** The part of the page that changes while the run goes on (also served alone to the live page). */
export function runState(model: RunModel): Html {
  const { workflowName, run, graph } = model;
  const steps = new Map(run.logs.map((s) => [s.node_id, s]));
  const statuses = new Map(
    graph.nodes.map((n) => [
      n.id,
      steps.get(n.id)?.status ?? (runEnded(run) ? (run.status === 'completed' ? 'skipped' : 'not_started') : 'pending'),
    ]),
  );
  const inputs = Object.entries(run.inputs);
  const output =
    run.output && typeof run.output === 'object' ? Object.entries(run.output as Record<string, unknown>) : [];
  return html`<dl class="facts"><div><dt>Status</dt><dd id="run-status" data-run-status>${statusBadge(run.status)}</dd></div>
<div><dt>Started</dt><dd>${isoDate(run.started_at)}</dd></div><div><dt>Duration</dt><dd>${formatDuration(run.duration)}</dd></div>
<div><dt>Tokens</dt><dd>${run.usage.total_tokens} <small>(${run.usage.prompt_tokens} in, ${run.usage.completion_tokens} out)</small></dd></div>
<div><dt>Cost</dt><dd id="run-cost">${run.cost ? html`${formatMoney(run.cost.total, run.cost.currency)} <small>(${formatMoney(run.cost.input, run.cost.currency)} in, ${formatMoney(run.cost.output, run.cost.currency)} out)</small>` : html`<small>${runEnded(run) ? 'none' : 'when it ends'}</small>`}</dd></div></dl>
${run.error ? html`<div class="error" role="alert"><p><strong>${run.error.code}</strong>: ${run.error.message}${run.error.node_id ? html` (node <code>${run.error.node_id}</code>)` : ''}</p></div>` : ''}
<h2>Inputs</h2>${inputs.length ? html`<dl class="inputs">${inputs.map(([k, v]) => html`<dt>${k}</dt><dd>${textBlock(v)}</dd>`)}</dl>` : html`<p><small>None.</small></p>`}
<h2>Output</h2>${
    run.status === 'completed'
      ? output.length
        ? output.map(([id, value]) => html`<h3><code>${id}</code></h3>${textBlock(value)}`)
        : html`<p>No output: every text output was on a branch not taken.</p>`
      : html`<p><small>${runEnded(run) ? 'None: the run did not complete.' : 'Not yet: the run has not ended.'}</small></p>`
  }
${runTimelineOf(model)}
<h2>Nodes</h2>
${graphSvg(graph.nodes, graph.edges, { title: `${workflowName}, run ${run.id}: each node's status`, statuses, nodeHref: (id) => `#${nodeAnchor(id)}` })}
<table class="steps"><thead><tr><th>Node</th><th>Status</th><th>Time</th><th>Usage</th><th>Output</th></tr></thead><tbody>${graph.nodes.map((n) => nodeRow(n, steps.get(n.id), run, graph.edges, steps.get(n.id)?.case ?? chosenCase(n.id, graph.edges, statuses)))}</tbody></table>`;
}

export interface RunPageModel extends RunModel {
  user: PageUser;
  /** The workflow as it is now, if it still exists (its run form is one click away). */
  workflow?: Workflow | undefined;
  /** The service's public address, for the copy-as-curl command. */
  baseUrl: string;
  flash?: string | undefined;
}

/** Which run this one retries, and the nodes it took from it rather than running them again. */
function retryOf(workflowId: string, run: RunDetail): Html {
  const reused = run.logs.filter((step) => step.reused_from).map((step) => step.node_id);
  return html`<p id="retry-of">Retry of <a href="/workflows/${workflowId}/runs/${run.retry_of}"><code>${run.retry_of}</code></a>: ${
    reused.length
      ? html`${reused.length === 1 ? 'the output of node' : 'the outputs of nodes'} ${reused.map((id, i) => html`${i ? ', ' : ''}<code>${id}</code>`)} reused, not made again.`
      : 'no step reused (none had completed).'
  }</p>`;
}

export function runPage(model: RunPageModel): Html {
  const { user, workflowId, workflowName, run, flash } = model;
  const runPath = `/workflows/${workflowId}/runs/${run.id}`;
  const live = runEnded(run)
    ? html``
    : html` data-live="${runPath}/state" data-events="${runPath}/events" data-timeline-url="${runPath}/timeline"`;
  return layout(
    // The skip link leads back to the workflow, where it runs again.
    {
      title: `Run ${run.id} of ${workflowName}`,
      user,
      current: WORKFLOWS_NAV,
      flash,
      mainAction: { id: 'back-to-workflow', label: 'the workflow' },
    },
    html`<p class="crumbs"><a href="/workflows">Workflows</a> / <a href="/workflows/${workflowId}" id="back-to-workflow">${workflowName}</a> /</p>
<h1>Run <code>${run.id}</code></h1>
<p><small>Version ${run.workflow_version ?? '?'} of the workflow · created ${isoDate(run.created_at)}${run.finished_at ? ` · ended ${isoDate(run.finished_at)}` : ''}</small></p>
${run.retry_of ? retryOf(workflowId, run) : ''}
${run.logs_truncated ? html`<p class="notice" id="steps-truncated">This run has more steps inside its map items than this page shows: the API's <code>GET /api/workflows/${workflowId}/runs/${run.id}/steps</code> pages through all of them.</p>` : ''}
${runControls(model)}${waitingForms(model)}
${runEnded(run) ? '' : html`<p class="notice" id="live-note" data-live-note>This run has not ended. The page follows it as it goes; without JavaScript, reload the page to see its progress.</p>`}
<p id="run-announce" class="visually-hidden" aria-live="polite" data-run-announce></p><div id="run-state"${live}>${runState(model)}</div>`,
  );
}
