import type { WorkflowEdge, WorkflowNode } from '../../workflows/graph.ts';
import { html, type Html } from '../../html/html.ts';
import { statusWords } from '../format.ts';
import { findNodeDefinition } from '../../nodes/registry.ts';

// A workflow's graph as an SVG picture, built on the server (every text escaped by `html`). The
// layout is a small layered one (Sugiyama's scheme, as dagre does it, without its extras): each
// node sits one row below its deepest predecessor, and rows are ordered by the mean position of
// the neighbours in the row before and after, which undoes most edge crossings of real pipelines.
// Graphs reaching the console passed validation (no cycles); a cycle is still laid out, not looped.

export const NODE_WIDTH = 168;
export const NODE_HEIGHT = 46;
const GAP_X = 28;
const GAP_Y = 54;
const MARGIN = 12;
/** Node ids are at most 64 characters; longer than this is cut in the box (the whole id is its title). */
const LABEL_MAX = 20;
/** Up to three boxes side by side (~600 px) scale down to a phone; wider graphs scroll there. */
const WIDE = 3 * NODE_WIDTH + 2 * GAP_X + 2 * MARGIN;

export interface PlacedNode {
  node: WorkflowNode;
  layer: number;
  /** Position in its layer, from the left. */
  order: number;
  x: number;
  y: number;
}

export interface GraphLayout {
  nodes: PlacedNode[];
  width: number;
  height: number;
}

/** Where each node goes: rows by longest path from the inputs, ordered to keep edges from crossing. */
export function layoutGraph(nodes: readonly WorkflowNode[], edges: readonly WorkflowEdge[]): GraphLayout {
  const ids = new Set(nodes.map((n) => n.id));
  const known = edges.filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to);
  const preds = new Map(nodes.map((n) => [n.id, [] as string[]]));
  const succs = new Map(nodes.map((n) => [n.id, [] as string[]]));
  for (const e of known) {
    preds.get(e.to)!.push(e.from);
    succs.get(e.from)!.push(e.to);
  }

  // Longest-path layering in topological order (Kahn); nodes left on a cycle go below the rest.
  const layer = new Map<string, number>();
  const indegree = new Map(nodes.map((n) => [n.id, preds.get(n.id)!.length]));
  const ready = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  while (ready.length) {
    const id = ready.shift()!;
    const l = Math.max(-1, ...preds.get(id)!.map((p) => layer.get(p) ?? -1)) + 1;
    layer.set(id, l);
    for (const s of succs.get(id)!) {
      indegree.set(s, indegree.get(s)! - 1);
      if (indegree.get(s) === 0) ready.push(s);
    }
  }
  let deepest = Math.max(-1, ...layer.values());
  for (const n of nodes) if (!layer.has(n.id)) layer.set(n.id, ++deepest);

  const rows: string[][] = [];
  for (const n of nodes) (rows[layer.get(n.id)!] ??= []).push(n.id);
  for (let i = 0; i < rows.length; i++) rows[i] ??= [];

  // Barycentre sweeps, down then up, a few times (stable: ties keep the order of the body).
  const position = new Map<string, number>();
  const index = () => rows.forEach((row) => row.forEach((id, i) => position.set(id, i)));
  const reorder = (row: string[], neighbours: Map<string, string[]>) => {
    const weight = new Map(
      row.map((id, i) => {
        const ps = neighbours.get(id)!.filter((p) => position.has(p));
        return [id, ps.length ? ps.reduce((sum, p) => sum + position.get(p)!, 0) / ps.length : i];
      }),
    );
    row.sort((a, b) => weight.get(a)! - weight.get(b)!);
    row.forEach((id, i) => position.set(id, i));
  };
  index();
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let l = 1; l < rows.length; l++) reorder(rows[l]!, preds);
    for (let l = rows.length - 2; l >= 0; l--) reorder(rows[l]!, succs);
  }

  const widest = Math.max(1, ...rows.map((r) => r.length));
  const width = widest * NODE_WIDTH + (widest - 1) * GAP_X + 2 * MARGIN;
  const height = rows.length * NODE_HEIGHT + Math.max(0, rows.length - 1) * GAP_Y + 2 * MARGIN;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const placed: PlacedNode[] = [];
  rows.forEach((row, l) => {
    // Each row centred under the widest one.
    const rowWidth = row.length * NODE_WIDTH + (row.length - 1) * GAP_X;
    const left = (width - rowWidth) / 2;
    row.forEach((id, order) => {
      placed.push({
        node: byId.get(id)!,
        layer: l,
        order,
        x: left + order * (NODE_WIDTH + GAP_X),
        y: MARGIN + l * (NODE_HEIGHT + GAP_Y),
      });
    });
  });
  return { nodes: placed, width, height };
}

/** How the console names a node type (its definition's `label`, nodes/registry.ts); the type itself for one it does not know. */
export const nodeTypeLabel = (type: string): string => findNodeDefinition(type)?.label ?? type;

const cut = (text: string) => (text.length > LABEL_MAX ? `${text.slice(0, LABEL_MAX - 1)}…` : text);

export interface GraphSvgOptions {
  /** Each node's run status (`completed`, `skipped`...), drawn on its box and named in its title. */
  statuses?: ReadonlyMap<string, string>;
  /** The accessible name of the picture. */
  title: string;
  /**
   * Where a node's details are (`#node-triage`): each box is then a link there, reachable by
   * keyboard, and the picture a group of links rather than an image.
   */
  nodeHref?: (id: string) => string;
}

/**
 * The picture: a box per node (its id, its type, a coloured stripe per type, the run status if
 * given), an arrow per edge, `true`/`false` on the edges out of a condition. It scales down to its
 * container (CSS `max-width:100%`), so a phone never scrolls sideways.
 */
export function graphSvg(
  nodes: readonly WorkflowNode[],
  edges: readonly WorkflowEdge[],
  options: GraphSvgOptions,
): Html {
  const layout = layoutGraph(nodes, edges);
  const at = new Map(layout.nodes.map((p) => [p.node.id, p]));
  const arrows = edges.flatMap((e) => {
    const from = at.get(e.from);
    const to = at.get(e.to);
    if (!from || !to || from === to) return [];
    const x1 = from.x + NODE_WIDTH / 2;
    const y1 = from.y + NODE_HEIGHT;
    const x2 = to.x + NODE_WIDTH / 2;
    const y2 = to.y - 3;
    const bend = Math.max(20, (y2 - y1) / 2);
    const path = `M${x1} ${y1} C${x1} ${y1 + bend} ${x2} ${y2 - bend} ${x2} ${y2}`;
    // The label a third of the way down, where edges out of one condition are already apart.
    const lx = x1 + (x2 - x1) * 0.3;
    const ly = y1 + Math.min(22, (y2 - y1) * 0.35);
    // A condition's branch, or a switch's case (or an error route's `error`), named on the edge.
    const label = e.branch
      ? html`<text class="branch branch-${e.branch}" x="${lx.toFixed(1)}" y="${ly.toFixed(1)}" text-anchor="middle">${e.branch}</text>`
      : e.case
        ? html`<text class="branch edge-case" x="${lx.toFixed(1)}" y="${ly.toFixed(1)}" text-anchor="middle">${e.case}</text>`
        : '';
    return [
      html`<g class="edge" data-from="${e.from}" data-to="${e.to}" data-branch="${e.branch ?? ''}"${e.case ? html` data-case="${e.case}"` : ''}><path d="${path}" marker-end="url(#arrow)" data-edge-line/>${label}</g>`,
    ];
  });
  const boxes = layout.nodes.map(({ node, x, y }) => {
    const status = options.statuses?.get(node.id);
    const type = nodeTypeLabel(node.type);
    // data-label and the data-field hooks let the run page's script rewrite the status in place.
    const box = html`<g class="node type-${node.type}${status ? html` status-${status}` : ''}" data-node="${node.id}" data-label="${type}" transform="translate(${x} ${y})">
<title data-field="title">${node.id} (${type})${status ? `: ${statusWords(status)}` : ''}</title>
<rect width="${NODE_WIDTH}" height="${NODE_HEIGHT}" rx="6"/><rect class="stripe" width="6" height="${NODE_HEIGHT}" rx="3"/>
<text class="node-id" x="14" y="19">${cut(node.id)}</text><text class="node-type" data-field="type" x="14" y="36">${type}${status ? ` · ${statusWords(status)}` : ''}</text></g>`;
    return options.nodeHref
      ? html`<a href="${options.nodeHref(node.id)}" class="node-link" data-node-link="${node.id}">${box}</a>`
      : box;
  });
  // A graph wider than three boxes would shrink past reading on a phone: it keeps its size there and scrolls in its own box.
  const wide = layout.width > WIDE ? html` class="wide"` : '';
  return html`<div class="graph"><svg xmlns="http://www.w3.org/2000/svg"${wide} viewBox="0 0 ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}" role="${options.nodeHref ? 'group' : 'img'}" aria-label="${options.title}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z"/></marker></defs>
${arrows}${boxes}</svg>${edgeList(nodes, edges, options.title)}</div>`;
}

/** A node as words: `llm_call "answer"`. */
const nodeWords = (node: WorkflowNode | undefined, id: string): string => (node ? `${node.type} "${id}"` : `"${id}"`);

/**
 * The picture's text equivalent for screen readers (WCAG 1.1.1): each edge as a list item
 * (`text_input "question" → llm_call "answer"`, with `when true`/`when false` on a condition's
 * edges), and the nodes no edge touches. Visually hidden: the picture says the same to the eye.
 */
function edgeList(nodes: readonly WorkflowNode[], edges: readonly WorkflowEdge[], title: string): Html {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const linked = new Set(edges.flatMap((e) => [e.from, e.to]));
  const items = [
    ...edges.map(
      (e) =>
        html`<li>${nodeWords(byId.get(e.from), e.from)}${e.branch ? ` when ${e.branch}` : e.case ? ` case ${e.case}` : ''} → ${nodeWords(byId.get(e.to), e.to)}</li>`,
    ),
    ...nodes.filter((n) => !linked.has(n.id)).map((n) => html`<li>${nodeWords(n, n.id)}, no edges</li>`),
  ];
  return html`<ul class="visually-hidden graph-edges" aria-label="${title}, as text: ${edges.length} ${edges.length === 1 ? 'edge' : 'edges'}">${items}</ul>`;
}
