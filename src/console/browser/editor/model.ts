import type { EditorSchemas, NodeTypeSpec, PlacedProblem } from '../../editorTypes.ts';

// The editor's state, and the graph as the JSON text holds it. No DOM here.

export interface GraphNode {
  id: string;
  type: string;
  config: Record<string, unknown>;
}
export interface GraphEdge {
  from: string;
  to: string;
  branch?: string;
  case?: string;
}
export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** A run of this workflow watched from the editor: each node's last status and, for a switch, its chosen case. */
export interface WatchedRun {
  id: string;
  nodes: Record<string, { status: string; case?: string }>;
}

export interface EditorState {
  /** The graph the JSON text holds; null while it does not read as one. */
  graph: Graph | null;
  selected: string | null;
  problems: PlacedProblem[];
  /** The connect control's last choices. */
  from: string | null;
  to: string | null;
  /** The palette's chosen type. */
  adding: string | undefined;
  run: WatchedRun | null;
}

/** The page's builder: its elements, the schemas it builds from, its state, and how it redraws. */
export interface Editor {
  root: HTMLElement;
  jsonArea: HTMLTextAreaElement;
  schemas: EditorSchemas;
  typeSpec: Map<string, NodeTypeSpec>;
  /** The values an edge's `branch` may take, when the contract has them. */
  branchValues: string[] | null;
  state: EditorState;
  render(): void;
  /** Redraws the node list and the edges only, leaving the selected node's form (and its focus) as it is. */
  renderLists(): void;
  schedulePreview(): void;
}

/** The JSON text as a graph the builder can show, or the reason it cannot. */
export function readGraph(text: string): { graph: Graph } | { reason: string } {
  let value: { nodes?: unknown; edges?: unknown } | null;
  try {
    value = JSON.parse(text) as typeof value;
  } catch (err) {
    return { reason: `it is not JSON (${(err as Error).message})` };
  }
  const nodes = value?.nodes ?? [];
  const edges = value?.edges ?? [];
  if (typeof value !== 'object' || !Array.isArray(nodes) || !Array.isArray(edges))
    return { reason: 'it needs "nodes" and "edges" lists' };
  if (!nodes.every((n) => n && typeof n.id === 'string' && typeof n.type === 'string'))
    return { reason: 'a node has no id or type' };
  if (!edges.every((e) => e && typeof e.from === 'string' && typeof e.to === 'string'))
    return { reason: 'an edge has no from or to' };
  for (const n of nodes) if (typeof n.config !== 'object' || n.config === null) n.config = {};
  return { graph: { nodes, edges } as Graph };
}

export const nodeAt = (graph: Graph, id: string): GraphNode | undefined => graph.nodes.find((n) => n.id === id);

/** An id for a new node of `type` that no node has: `llm_call_1`, `llm_call_2`... */
export function freshId(graph: Graph, type: string): string {
  const base = type.replace(/[^A-Za-z0-9_-]/g, '_');
  for (let n = 1; ; n++) if (!nodeAt(graph, `${base}_${n}`)) return `${base}_${n}`;
}

/** The problems that point into a node (by its index, as the API's pointers do). */
export function problemsOf(graph: Graph, problems: readonly PlacedProblem[], node: GraphNode): PlacedProblem[] {
  const at = `/nodes/${graph.nodes.indexOf(node)}`;
  return problems.filter((p) => p.pointer === at || p.pointer.startsWith(`${at}/`));
}

/** The names of a list's items (a switch's cases): those that have a string `name`. */
export const caseNamesOf = (list: unknown): string[] =>
  Array.isArray(list)
    ? list.flatMap((c: unknown) =>
        typeof c === 'object' && c !== null && typeof (c as { name?: unknown }).name === 'string'
          ? [(c as { name: string }).name]
          : [],
      )
    : [];

/** What an edge out of `from` may be marked with: a case of its `caseList` or `default`, else the contract's `branch`. */
export interface EdgeMark {
  key: 'case' | 'branch';
  values: string[];
  labels: string[];
}

export function edgeMarkOf(
  editor: Pick<Editor, 'typeSpec' | 'branchValues'>,
  from: GraphNode | undefined,
): EdgeMark | null {
  const list = from && editor.typeSpec.get(from.type)?.caseList;
  if (from && list) {
    const names = caseNamesOf(from.config[list]);
    return { key: 'case', values: [...names, 'default'], labels: [...names.map((n) => `case ${n}`), 'default'] };
  }
  const branches = editor.branchValues;
  if (!branches) return null;
  return { key: 'branch', values: ['', ...branches], labels: ['always', ...branches.map((v) => `when ${v}`)] };
}
