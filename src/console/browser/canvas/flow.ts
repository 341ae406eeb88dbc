import { Graph as LayoutGraph, layout } from '@dagrejs/dagre';
import type { Edge, Node } from '@xyflow/react';
import type { NodeTypeSpec } from '../../editorTypes.ts';
import { caseNamesOf, type Graph, type GraphEdge, type GraphNode, type WatchedRun } from '../editor/model.ts';

// The workflow graph as the canvas draws it (@xyflow/react's nodes and edges), from the JSON
// text's graph, and back: which output handles a node has (read from the registry's capabilities
// the page hands over, never from type names), where each node stands (its `ui`, else the
// auto-layout's place), and what an edge drawn from a handle writes. No DOM here.

/** An output handle: its id (`out`, `case:<name>`, `branch:<value>`) and the label drawn beside it. */
export interface OutHandle {
  id: string;
  label: string;
}

export interface NodeBoxData extends Record<string, unknown> {
  label: string;
  typeLabel: string;
  /** The node whose form the builder shows. */
  current: boolean;
  input: boolean;
  outputs: OutHandle[];
  problems: number;
  run: { status: string; case?: string } | undefined;
}

export type CanvasNode = Node<NodeBoxData, 'box'>;

const NODE_WIDTH = 200;
const nodeHeight = (outputs: number) => 56 + Math.max(0, outputs - 1) * 22;

/** The output handles of a node: its cases and `default`, or true/false, or one; `error` when it goes on past failure. */
export function outHandlesOf(spec: NodeTypeSpec | undefined, node: GraphNode): OutHandle[] {
  if (spec?.noEdgeOut) return [];
  let handles: OutHandle[];
  if (spec?.caseList) {
    const names = caseNamesOf(node.config[spec.caseList]);
    handles = [...names, 'default'].map((n) => ({ id: `case:${n}`, label: n }));
  } else if (spec?.branches) {
    handles = ['true', 'false'].map((v) => ({ id: `branch:${v}`, label: v }));
  } else handles = [{ id: 'out', label: '' }];
  if (spec?.routable && node.config.on_error === 'continue') handles.push({ id: 'case:error', label: 'error' });
  // Two cases of one name (while one is being typed) are one handle.
  return handles.filter((h, i) => handles.findIndex((other) => other.id === h.id) === i);
}

/** The handle an edge leaves from. */
export const handleOfEdge = (edge: GraphEdge): string =>
  edge.case !== undefined ? `case:${edge.case}` : edge.branch !== undefined ? `branch:${edge.branch}` : 'out';

/** What an edge drawn from `handle` carries: `{case}`, `{branch}` or nothing. */
export function markOfHandle(handle: string | null | undefined): Pick<GraphEdge, 'case' | 'branch'> {
  if (handle?.startsWith('case:')) return { case: handle.slice(5) };
  if (handle?.startsWith('branch:')) return { branch: handle.slice(7) };
  return {};
}

/** Every node's place by the auto-layout (dagre, left to right). */
export function autoLayout(graph: Graph, specs: Map<string, NodeTypeSpec>): Map<string, { x: number; y: number }> {
  const g = new LayoutGraph();
  g.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 80, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes)
    g.setNode(n.id, { width: NODE_WIDTH, height: nodeHeight(outHandlesOf(specs.get(n.type), n).length) });
  for (const e of graph.edges) if (g.hasNode(e.from) && g.hasNode(e.to)) g.setEdge(e.from, e.to);
  layout(g);
  const places = new Map<string, { x: number; y: number }>();
  for (const n of graph.nodes) {
    const at = g.node(n.id);
    // dagre gives centres; a node's `ui` is its top-left corner.
    places.set(n.id, { x: Math.round(at.x - at.width / 2), y: Math.round(at.y - at.height / 2) });
  }
  return places;
}

export interface FlowInput {
  graph: Graph;
  specs: Map<string, NodeTypeSpec>;
  selected: ReadonlySet<string>;
  current: string | null;
  problemsOf: (node: GraphNode) => number;
  run: WatchedRun | null;
}

/** The canvas's nodes: placed at their `ui`, or where the auto-layout puts them when they have none. */
export function flowNodes({ graph, specs, selected, current, problemsOf, run }: FlowInput): CanvasNode[] {
  const placed = graph.nodes.every((n) => n.ui);
  const auto = placed ? null : autoLayout(graph, specs);
  return graph.nodes.map((n) => {
    const spec = specs.get(n.type);
    const position = n.ui ? { x: n.ui.x, y: n.ui.y } : (auto?.get(n.id) ?? { x: 0, y: 0 });
    return {
      id: n.id,
      type: 'box',
      position,
      selected: selected.has(n.id),
      ariaLabel: `${n.id}, ${spec?.label ?? n.type}`,
      data: {
        label: n.id,
        typeLabel: spec?.label ?? n.type,
        current: n.id === current,
        input: !spec?.noEdgeIn,
        outputs: outHandlesOf(spec, n),
        problems: problemsOf(n),
        run: run?.nodes[n.id],
      },
    };
  });
}

/** An edge's id on the canvas: its ends and its mark (a graph holds no two such edges alike). */
export const edgeIdOf = (e: GraphEdge): string => `${e.from}->${e.to}:${e.case ?? ''}:${e.branch ?? ''}`;

/** The canvas's edges, each from its case's or branch's handle and labelled with it. */
export function flowEdges(graph: Graph, nodes: readonly CanvasNode[], run: WatchedRun | null): Edge[] {
  const handles = new Map(nodes.map((n) => [n.id, n.data.outputs.map((h) => h.id)]));
  return graph.edges.map((e, i) => {
    const wanted = handleOfEdge(e);
    const own = handles.get(e.from) ?? [];
    const label = e.case ?? e.branch;
    const chosen = run?.nodes[e.from]?.case;
    return {
      id: edgeIdOf(e),
      source: e.from,
      target: e.to,
      // An edge whose case is not (yet) one of its node's leaves from the first handle, saying so.
      sourceHandle: own.includes(wanted) ? wanted : (own[0] ?? null),
      targetHandle: 'in',
      ...(label !== undefined ? { label: own.includes(wanted) ? label : `${label} (none such)` } : {}),
      ariaLabel: `Edge ${e.from} → ${e.to}${label !== undefined ? ` (${label})` : ''}`,
      className: chosen !== undefined && chosen === e.case ? 'taken' : '',
      data: { index: i },
    };
  });
}

const GAP = { x: 260, y: 100 };

/**
 * Where a node added from the palette goes: right of the selected node (what it will follow), lower
 * while that place is taken; with none selected, at the view's centre.
 */
export function placeNew(
  nodes: readonly CanvasNode[],
  selected: string | null,
  centre: { x: number; y: number },
): { x: number; y: number } {
  const taken = (x: number, y: number) =>
    nodes.some((n) => Math.abs(n.position.x - x) < NODE_WIDTH && Math.abs(n.position.y - y) < 80);
  const anchor = nodes.find((n) => n.id === selected);
  const at = anchor
    ? { x: anchor.position.x + GAP.x, y: anchor.position.y }
    : { x: centre.x - NODE_WIDTH / 2, y: centre.y - 30 };
  while (taken(at.x, at.y)) at.y += GAP.y;
  return at;
}
