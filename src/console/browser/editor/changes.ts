import { hook } from '../dom.ts';
import { initial } from './fields.ts';
import { freshId, nodeAt, type Editor, type Graph, type GraphEdge, type GraphNode } from './model.ts';

// The builder's changes, each written to the JSON text at once (which asks for a new preview).

/** The graph being built (the builder offers no change while the JSON does not read). */
export function graphOf(editor: Editor): Graph {
  if (!editor.state.graph) throw new Error('the JSON does not read as a graph');
  return editor.state.graph;
}

export const labelOf = (editor: Editor, type: string): string => editor.typeSpec.get(type)?.label ?? type;

/** Says what happened in the builder's status line (a live region). */
export function announce(editor: Editor, text: string): void {
  const status = editor.root.querySelector('[data-builder-status]');
  if (status) status.textContent = text;
}

export function writeJson(editor: Editor): void {
  editor.jsonArea.value = JSON.stringify(editor.state.graph, null, 2);
  editor.schedulePreview();
}

const focus = (editor: Editor, selector: string) => editor.root.querySelector<HTMLElement>(selector)?.focus();

/**
 * A new node's first values, with every `nodes.<id>` the contract's examples name (a condition's
 * `{{ nodes.triage.output }}`) pointed at `upstream` when no node has that id; without an upstream
 * node such a text is left blank.
 */
function pointAtExisting(value: unknown, graph: Graph, upstream: string | null): unknown {
  if (typeof value === 'string') {
    let dangling = false;
    const text = value.replace(/\bnodes\.([A-Za-z0-9_-]+)/g, (whole, id: string) => {
      if (nodeAt(graph, id)) return whole;
      if (!upstream) dangling = true;
      return `nodes.${upstream}`;
    });
    return dangling ? '' : text;
  }
  if (Array.isArray(value)) return value.map((v) => pointAtExisting(v, graph, upstream));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, pointAtExisting(v, graph, upstream)]));
  return value;
}

export function addNode(editor: Editor, type: string): void {
  const { state } = editor;
  const graph = graphOf(editor);
  const spec = editor.typeSpec.get(type);
  const id = freshId(graph, type);
  state.adding = type;
  const upstream = state.selected && nodeAt(graph, state.selected) ? state.selected : null;
  const first = initial({ ...spec?.config, example: undefined });
  const config = pointAtExisting(first, graph, upstream) as GraphNode['config'];
  graph.nodes.push({ id, type, config });
  state.to = id;
  state.from = state.selected && state.selected !== id ? state.selected : state.from;
  state.selected = id;
  writeJson(editor);
  editor.render();
  focus(editor, '#node-id');
  announce(editor, `Added ${labelOf(editor, type)} "${id}". Connect it below.`);
}

export function removeNode(editor: Editor, id: string): void {
  const graph = graphOf(editor);
  graph.nodes = graph.nodes.filter((n) => n.id !== id);
  graph.edges = graph.edges.filter((e) => e.from !== id && e.to !== id);
  editor.state.selected = graph.nodes[0]?.id ?? null;
  writeJson(editor);
  editor.render();
  focus(editor, '#add-node-type');
  announce(editor, `Removed "${id}" and its edges.`);
}

/** Gives a node a new id, its edges following; false when the id is empty or taken. */
export function renameNode(editor: Editor, node: GraphNode, id: string): boolean {
  const graph = graphOf(editor);
  if (!id || id === node.id || nodeAt(graph, id)) return false;
  for (const e of graph.edges) {
    if (e.from === node.id) e.from = id;
    if (e.to === node.id) e.to = id;
  }
  const { state } = editor;
  if (state.from === node.id) state.from = id;
  if (state.to === node.id) state.to = id;
  node.id = id;
  state.selected = id;
  writeJson(editor);
  return true;
}

/** Adds the edge from → to, marked with a `branch` or a `case` when `mark` has one. */
export function addEdge(editor: Editor, from: string, to: string, mark: Pick<GraphEdge, 'branch' | 'case'>): void {
  const graph = graphOf(editor);
  if (!from || !to || from === to) return announce(editor, 'Pick two different nodes to connect.');
  const same = (e: GraphEdge) =>
    e.from === from && e.to === to && (e.branch ?? '') === (mark.branch ?? '') && (e.case ?? '') === (mark.case ?? '');
  if (graph.edges.some(same)) return announce(editor, `${from} → ${to} is there already.`);
  graph.edges.push({ from, to, ...mark });
  writeJson(editor);
  editor.render();
  const how = mark.case ? ` (case ${mark.case})` : mark.branch ? ` (when ${mark.branch})` : '';
  announce(editor, `Connected ${from} → ${to}${how}.`);
}

export function removeEdge(editor: Editor, index: number): void {
  const [gone] = graphOf(editor).edges.splice(index, 1);
  writeJson(editor);
  editor.render();
  document.querySelector('[data-picture-actions]')?.replaceChildren();
  const next = editor.root.querySelector<HTMLElement>(hook('data-remove-edge', String(index)));
  (next ?? editor.root.querySelector<HTMLElement>('#connect-from'))?.focus();
  if (gone) announce(editor, `Removed the edge ${gone.from} → ${gone.to}.`);
}

/** Shows a node's form; focuses it (`focusForm`, from the picture) or its button in the node list. */
export function select(editor: Editor, id: string, focusForm: boolean): void {
  editor.state.selected = id;
  editor.render();
  if (focusForm) focus(editor, '#node-id');
  else focus(editor, '[data-node-button][aria-pressed=true]');
}
