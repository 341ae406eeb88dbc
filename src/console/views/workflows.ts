import type { Run } from '../../runs/service.ts';
import type { PageMeta, Workflow } from '../../workflows/service.ts';
import { html, type Html } from '../../html/html.ts';
import { formatDuration, formatMoney, isoDate, statusWords } from '../format.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { graphSvg } from './graphSvg.ts';
import { layout } from '../../html/layout.ts';
import { nodeAnchor, nodeSections } from './nodeInspector.ts';
import { curlBlock, curlForRunStart } from './runControls.ts';
import type { Schedule } from '../../schedules/service.ts';
import { schedulesSection } from './schedules.ts';
import { budgetSection, type BudgetModel } from './budgets.ts';
import { mcpToolSection, type McpToolModel } from './mcpTool.ts';
import type { Callback } from '../../hooks/callbacks.ts';
import { callbacksSection } from './callbacks.ts';
import { runInputOf } from '../../nodes/registry.ts';
import type { WorkflowTotals } from '../../runs/totals.ts';
import { totalsSection } from './totals.ts';

// The console's workflow pages: the list, and a workflow (graph, description, run form, run
// history, filtered by status or run id, and the curl command that starts a run).

export const WORKFLOWS_NAV = '/workflows';

/** A run's status as a badge (colour per status in the stylesheet, the word always written). */
export const statusBadge = (status: string): Html =>
  html`<span class="badge status-${status}">${statusWords(status)}</span>`;

/** Previous / next links of a paginated list (`?page=N`), with where we are. */
export function pager(path: string, meta: PageMeta, param = 'page', query: Record<string, string> = {}): Html {
  if (meta.total_pages <= 1) return html``;
  const link = (page: number) => `${path}?${new URLSearchParams({ ...query, [param]: String(page) }).toString()}`;
  return html`<nav class="pager" aria-label="Pages">${meta.page > 1 ? html`<a href="${link(meta.page - 1)}" rel="prev">Previous</a>` : ''}
<span>Page ${meta.page} of ${meta.total_pages}</span>${meta.page < meta.total_pages ? html`<a href="${link(meta.page + 1)}" rel="next">Next</a>` : ''}</nav>`;
}

export interface WorkflowsModel {
  user: PageUser;
  workflows: Workflow[];
  /** The newest run of each workflow shown, by workflow id. */
  latest: ReadonlyMap<string, Run>;
  meta: PageMeta;
  flash?: string | undefined;
}

export function workflowsPage({ user, workflows, latest, meta, flash }: WorkflowsModel): Html {
  const rows = workflows.map((w, i) => {
    const run = latest.get(w.id);
    return html`<tr><td><a href="/workflows/${w.id}"${i === 0 ? html` id="first-workflow"` : ''}><strong>${w.name}</strong></a>${w.description ? html`<br><small>${w.description.length > 140 ? `${w.description.slice(0, 139)}…` : w.description}</small>` : ''}</td>
<td>${w.nodes.length}<span class="cell-label"> nodes</span></td>
<td>${run ? html`<a href="/workflows/${w.id}/runs/${run.id}">${statusBadge(run.status)}</a> <small>${isoDate(run.created_at)}</small>` : html`<small>never run</small>`}</td>
<td><small>updated ${isoDate(w.updated_at)}</small></td></tr>`;
  });
  return layout(
    // The skip link leads to the first workflow (without any, to the page's text).
    {
      title: 'Workflows',
      user,
      current: WORKFLOWS_NAV,
      flash,
      mainAction: workflows.length ? { id: 'first-workflow', label: 'the workflows' } : undefined,
    },
    html`<h1>Workflows</h1><p><a class="button" href="/workflows/new" id="new-workflow">New workflow</a></p>
${
  workflows.length
    ? html`<table class="workflows"><thead><tr><th>Workflow</th><th>Nodes</th><th>Last run</th><th>Updated</th></tr></thead><tbody>${rows}</tbody></table>${pager('/workflows', meta)}`
    : meta.total
      ? html`<p>No workflows on this page. <a href="/workflows">Back to the first page</a>.</p>`
      : html`<p>No workflows yet. Create one here (<a href="/workflows/new">New workflow</a>) or through the API (<code>POST /api/workflows</code> with an access token that has the <code>workflows</code> permission): see the <a href="/docs">API reference</a>.</p>`
}`,
  );
}

/** The `text_input` variables of a graph, in node order, each once: the run form's fields. */
export function inputVariables(nodes: Workflow['nodes']): string[] {
  return [...new Set(nodes.flatMap((n) => runInputOf(n)?.variable ?? []))];
}

/** The form field of a variable (`input_ticket`): variables are identifiers, so the name is one too. */
export const inputField = (variable: string) => `input_${variable}`;

export interface RunFormState {
  /** A fresh key per rendered form: submitting it twice starts one run (the API's Idempotency-Key). */
  idempotencyKey: string;
  values: Record<string, string>;
  problems: FormProblem[];
}

/** Where the run form starts: the first field with a problem, else the first field, else its button. */
function runFormStart(workflow: Workflow, state: RunFormState): string {
  const first = inputVariables(workflow.nodes)[0];
  return state.problems.find((p) => p.field)?.field ?? (first === undefined ? RUN_BUTTON : inputField(first));
}

const RUN_BUTTON = 'run-workflow';

function runForm(user: PageUser, workflow: Workflow, state: RunFormState): Html {
  const variables = inputVariables(workflow.nodes);
  const fields = variables.map((v) => {
    const name = inputField(v);
    return html`<label for="${name}">${v}</label><textarea id="${name}" name="${name}" rows="3" required${invalidAttrs(state.problems, name)}>${state.values[v] ?? ''}</textarea>${fieldError(state.problems, name)}`;
  });
  return html`<form method="post" action="/workflows/${workflow.id}/run" class="run-form"><input type="hidden" name="csrf_token" value="${user.csrf}">
<input type="hidden" name="idempotency_key" value="${state.idempotencyKey}">${formProblems(state.problems)}
${variables.length ? html`<p><small>Every input is required.</small></p>` : html`<p><small>This workflow takes no inputs.</small></p>`}${fields}
<button type="submit" class="primary" id="${RUN_BUTTON}">Run workflow</button></form>`;
}

export interface WorkflowModel {
  user: PageUser;
  workflow: Workflow;
  runs: Run[];
  runsMeta: PageMeta;
  form: RunFormState;
  /** The run history's filter (a status, or the start of a run id); '' for every run. */
  search: string;
  /** The service's public address, for the copy-as-curl command. */
  baseUrl: string;
  /** The workflow's schedules (read-only here). */
  schedules?: Schedule[];
  /** The workflow's callbacks: paused ones with a Re-enable button. */
  callbacks?: Callback[];
  /** Its runs, tokens and cost over the period chosen. */
  totals?: WorkflowTotals;
  flash?: string | undefined;
  /** The workflow's monthly budget and its form. */
  budget?: BudgetModel;
  /** The "Use from an AI assistant" section: the MCP server's URL and the tool toggle. */
  mcp?: McpToolModel;
}

const RUN_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;

/** The history's filter: one link per status (the current one marked), and a search for a run id's start. */
function runFilter(workflow: Workflow, search: string): Html {
  const path = `/workflows/${workflow.id}`;
  const link = (value: string, label: string) =>
    html`<a href="${value ? `${path}?search=${value}` : path}#runs-heading"${search === value ? html` aria-current="true"` : ''}>${label}</a>`;
  const byStatus = RUN_STATUSES.includes(search as (typeof RUN_STATUSES)[number]);
  return html`<nav class="status-filter" aria-label="Runs by status">${link('', 'All')} ${RUN_STATUSES.map((s) => html`${link(s, s)} `)}</nav>
<form method="get" action="${path}#runs-heading" class="run-search" role="search"><label for="run-search">Run id starts with</label>
<input type="search" id="run-search" name="search" value="${byStatus ? '' : search}" maxlength="200" placeholder="run_01J"> <button type="submit">Search</button></form>`;
}

export function workflowPage({
  user,
  workflow,
  runs,
  runsMeta,
  form,
  search,
  baseUrl,
  schedules,
  callbacks,
  totals,
  flash,
  budget,
  mcp,
}: WorkflowModel): Html {
  const history = runs.map(
    (
      r,
    ) => html`<tr><td><a href="/workflows/${workflow.id}/runs/${r.id}">${statusBadge(r.status)}</a><br><small><code>${r.id}</code></small></td>
<td><span class="cell-label">Started </span>${isoDate(r.started_at ?? r.created_at)}</td><td><span class="cell-label">Duration </span>${formatDuration(r.duration)}</td>
<td>${r.usage.total_tokens}<span class="cell-label"> tokens</span></td><td data-field="cost">${r.cost ? formatMoney(r.cost.total, r.cost.currency) : html`<small>—</small>`}<span class="cell-label"> cost</span></td></tr>`,
  );
  // The run form comes first in the page, and the skip link leads to it: running is what this page is for.
  return layout(
    {
      title: workflow.name,
      user,
      current: WORKFLOWS_NAV,
      flash,
      mainAction: { id: runFormStart(workflow, form), label: 'Run the workflow' },
    },
    html`<p class="crumbs"><a href="/workflows">Workflows</a> /</p><h1>${workflow.name}</h1>
${workflow.description ? html`<p>${workflow.description}</p>` : ''}
<section aria-labelledby="run-heading"><h2 id="run-heading" class="first">Run it</h2>${runForm(user, workflow, form)}
${curlBlock(curlForRunStart(baseUrl, workflow.id, Object.fromEntries(inputVariables(workflow.nodes).map((v) => [v, form.values[v] || `your ${v}`]))), 'Start a run from a terminal (curl)')}</section>
<section aria-labelledby="graph-heading"><h2 id="graph-heading">Graph</h2>
<p><small>Version ${workflow.version} · ${workflow.nodes.length} nodes · updated ${isoDate(workflow.updated_at)}.</small> <a class="button" href="/workflows/${workflow.id}/edit" id="edit-workflow">Edit</a> <a class="button danger" href="/workflows/${workflow.id}/delete" id="delete-workflow">Delete workflow</a></p>
${graphSvg(workflow.nodes, workflow.edges, { title: `The graph of ${workflow.name}`, nodeHref: (id) => `#${nodeAnchor(id)}` })}
<p><small>Select a node for its settings.</small></p>${nodeSections(workflow.nodes, workflow.edges)}</section>
${totals ? totalsSection(workflow.id, totals) : ''}
<section aria-labelledby="runs-heading"><h2 id="runs-heading">Runs</h2>
${runsMeta.total || search ? runFilter(workflow, search) : ''}
${
  runs.length
    ? html`<table class="runs"><thead><tr><th>Run</th><th>Started</th><th>Duration</th><th>Tokens</th><th>Cost</th></tr></thead><tbody>${history}</tbody></table>${pager(`/workflows/${workflow.id}`, runsMeta, 'page', search ? { search } : {})}`
    : search
      ? html`<p>No runs match “${search}”. <a href="/workflows/${workflow.id}#runs-heading">Show every run</a>.</p>`
      : html`<p>No runs yet.</p>`
}</section>
${schedules ? schedulesSection(workflow.id, schedules) : ''}
${callbacks ? callbacksSection(user, workflow.id, callbacks) : ''}
${budget ? budgetSection(budget) : ''}
${mcp ? mcpToolSection(mcp) : ''}`,
  );
}
