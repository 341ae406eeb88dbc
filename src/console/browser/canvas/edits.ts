import { addEdge, addNode, announce, graphOf, writeJson } from '../editor/changes.ts';
import { freshId, type Editor, type Graph, type GraphEdge, type GraphNode } from '../editor/model.ts';
import { autoLayout, markOfHandle } from './flow.ts';
import { amend } from './history.ts';

// The canvas's changes to the graph, each written to the JSON text at once (one step of the
// history each), through the builder's own changes where it has one.

type Place = { x: number; y: number };

const round = (p: Place): Place => ({ x: Math.round(p.x), y: Math.round(p.y) });

/** Writes the nodes' new places (a drag's end) as their `ui`. */
export function moveNodes(editor: Editor, places: ReadonlyMap<string, Place>): void {
  const graph = graphOf(editor);
  let moved = 0;
  for (const n of graph.nodes) {
    const at = places.get(n.id);
    if (!at) continue;
    const next = round(at);
    if (n.ui?.x === next.x && n.ui?.y === next.y) continue;
    n.ui = next;
    moved++;
  }
  if (!moved) return;
  writeJson(editor);
  editor.render();
}

/** Places every node where the auto-layout (left to right) puts it. */
export function layoutAll(editor: Editor): void {
  const graph = graphOf(editor);
  const places = autoLayout(graph, editor.typeSpec);
  for (const n of graph.nodes) {
    const at = places.get(n.id);
    if (at) n.ui = at;
  }
  writeJson(editor);
  editor.render();
  announce(editor, 'Laid the nodes out from left to right.');
}

/** Adds a node of `type` at `place` (the view's centre): one step, the builder's Add node and its place. */
export function addNodeAt(editor: Editor, type: string, place: Place): void {
  const before = graphOf(editor).nodes.length;
  addNode(editor, type);
  const added = graphOf(editor).nodes[before];
  if (!added) return;
  added.ui = round(place);
  // Folded into Add node's step: written without a step of its own.
  editor.jsonArea.value = JSON.stringify(graphOf(editor), null, 2);
  amend(editor);
  editor.schedulePreview();
  editor.renderLists();
}

/** The edge drawn from `handle` of `from` (a case, a branch, or the plain output) to `to`. */
export function connectHandle(editor: Editor, from: string, handle: string | null | undefined, to: string): void {
  addEdge(editor, from, to, markOfHandle(handle));
}

/** Removes the nodes (and their edges) and the edges by index. */
export function removeSelection(editor: Editor, ids: ReadonlySet<string>, edges: ReadonlySet<number>): void {
  const graph = graphOf(editor);
  if (!ids.size && !edges.size) return;
  graph.nodes = graph.nodes.filter((n) => !ids.has(n.id));
  graph.edges = graph.edges.filter((e, i) => !edges.has(i) && !ids.has(e.from) && !ids.has(e.to));
  if (editor.state.selected && ids.has(editor.state.selected)) editor.state.selected = graph.nodes[0]?.id ?? null;
  writeJson(editor);
  editor.render();
  const what = [
    ids.size ? `${ids.size} node${ids.size > 1 ? 's' : ''}` : '',
    edges.size ? `${edges.size} edge(s)` : '',
  ];
  announce(editor, `Removed ${what.filter(Boolean).join(' and ')}.`);
}

/** What Copy took: the nodes and the edges between them. */
export interface Copied {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export function copyNodes(graph: Graph, ids: ReadonlySet<string>): Copied | null {
  const nodes = graph.nodes.filter((n) => ids.has(n.id));
  if (!nodes.length) return null;
  const edges = graph.edges.filter((e) => ids.has(e.from) && ids.has(e.to));
  return structuredClone({ nodes, edges });
}

const PASTE_OFFSET = 40;

/** Adds copies of the copied nodes under fresh ids, 40 units down and right, with the edges between them; returns their ids. */
export function pasteNodes(editor: Editor, copied: Copied): string[] {
  const graph = graphOf(editor);
  const ids = new Map<string, string>();
  for (const n of copied.nodes) {
    const id = freshId(graph, n.id.replace(/_\d+$/, ''));
    ids.set(n.id, id);
    const ui = n.ui ? { x: n.ui.x + PASTE_OFFSET, y: n.ui.y + PASTE_OFFSET } : undefined;
    graph.nodes.push({ ...structuredClone(n), id, ...(ui ? { ui } : {}) });
  }
  for (const e of copied.edges) graph.edges.push({ ...e, from: ids.get(e.from)!, to: ids.get(e.to)! });
  const pasted = [...ids.values()];
  editor.state.selected = pasted[0] ?? editor.state.selected;
  writeJson(editor);
  editor.render();
  announce(editor, `Pasted ${pasted.map((id) => `"${id}"`).join(', ')}.`);
  return pasted;
}
