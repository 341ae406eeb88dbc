import type { GraphSnapshot, RunStep } from '../../runs/service.ts';
import { html, type Html } from '../../html/html.ts';
import { nodeTypeLabel } from './graphSvg.ts';

// The node inspector: what each node is set to do (its config) and, on a run's page, what it did
// (the text it worked on, its output and error). The graph's boxes link to it (`#node-<id>`), so it
// works without script; console.js opens a run step's details when its box is clicked.

type Node = GraphSnapshot['nodes'][number];
type Edge = GraphSnapshot['edges'][number];

export const nodeAnchor = (id: string) => `node-${id}`;

/** A config value as written: text in a block (whitespace kept), anything else as JSON. */
const value = (v: unknown): Html =>
  typeof v === 'string'
    ? v.includes('\n') || v.length > 60
      ? html`<pre>${v}</pre>`
      : html`<code>${v}</code>`
    : html`<code>${JSON.stringify(v)}</code>`;

/** What an edge is followed on: a branch (`when true`) or a case (`case urgent`). */
const edgeMark = (e: Edge): string => (e.branch ? ` (when ${e.branch})` : e.case ? ` (case ${e.case})` : '');

/** The node's config, key by key, and where its edges come from and go. */
export function nodeConfig(node: Node, edges: readonly Edge[]): Html {
  const entries = Object.entries(node.config as Record<string, unknown>);
  const into = edges.filter((e) => e.to === node.id).map((e) => html`<code>${e.from}</code>${edgeMark(e)} `);
  const out = edges.filter((e) => e.from === node.id).map((e) => html`<code>${e.to}</code>${edgeMark(e)} `);
  return html`<dl class="node-config">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${value(v)}</dd>`)}
<dt>from</dt><dd>${into.length ? into : html`<small>nothing (a start)</small>`}</dd><dt>to</dt><dd>${out.length ? out : html`<small>nothing (an end)</small>`}</dd></dl>`;
}

/** The workflow page's inspector: one section per node, the target of its box's link. */
export function nodeSections(nodes: readonly Node[], edges: readonly Edge[]): Html {
  return html`${nodes.map(
    (n) =>
      html`<section class="node-detail" id="${nodeAnchor(n.id)}" tabindex="-1" aria-labelledby="${nodeAnchor(n.id)}-heading"><h3 id="${nodeAnchor(n.id)}-heading"><code>${n.id}</code> <small>${nodeTypeLabel(n.type)}</small></h3>${nodeConfig(n, edges)}</section>`,
  )}`;
}

/** How many times the node called its model: `1`, or `3 (2 retries)`. */
export const attemptsText = (attempts: number): string =>
  attempts > 1 ? `${attempts} (${attempts - 1} ${attempts === 2 ? 'retry' : 'retries'})` : String(attempts);

/** On a run's page, under the node's name in its row: its config, the text it worked on and its attempts. */
export function stepDetails(node: Node, step: RunStep | undefined, edges: readonly Edge[]): Html {
  return html`<details class="step-details" data-step-details><summary>Config and input</summary>${nodeConfig(node, edges)}${
    step?.attempts
      ? html`<p class="step-attempts"><strong>Attempts</strong> ${attemptsText(step.attempts)} <small>(calls to the model provider)</small></p>`
      : ''
  }${
    step?.input !== null && step?.input !== undefined
      ? html`<p><strong>Input</strong> <small>(for an LLM call, the prompt it sent)</small></p><pre>${step.input}</pre>`
      : ''
  }</details>`;
}

/** The most calls a node's row lists; a run's API detail has them all. */
const CALLS_SHOWN = 100;

/** Whether a step is one call of the node: `<id>[<n>].<name>`, not a step inside it. */
const isCallOf = (id: string, stepId: string): boolean =>
  stepId.startsWith(`${id}[`) && /^\[\d+\]\.[A-Za-z0-9_-]+$/.test(stepId.slice(id.length));

/** On a run's page, under a node that lists its calls (an agent's tool calls): each call's step, its arguments and result. */
export function callSteps(id: string, logs: readonly RunStep[]): Html {
  const calls = logs.filter((s) => isCallOf(id, s.node_id));
  if (calls.length === 0) return html``;
  const more = calls.length - CALLS_SHOWN;
  return html`<details class="step-calls" data-step-calls><summary>Tool calls (${String(calls.length)})</summary><ol>${calls
    .slice(0, CALLS_SHOWN)
    .map(
      (c) =>
        html`<li data-call="${c.node_id}"><code>${c.node_id}</code> <small>${c.status}</small><pre>${c.input ?? ''}</pre>${
          c.error
            ? html`<p class="error"><strong>${c.error.code}</strong>: ${c.error.message}</p>`
            : html`<pre>${c.output ?? ''}</pre>`
        }</li>`,
    )}</ol>${more > 0 ? html`<p><small>and ${String(more)} more (the run's API detail lists them all)</small></p>` : ''}</details>`;
}
