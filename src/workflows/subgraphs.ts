// The save-time rules that a node type declares about its place in the graph (its definition's
// `graphProblems`: a split's options, a map's one list and its body, checked as a graph of its
// own), and which workflows a graph calls (each type's `calledWorkflow`, at any depth of inner
// graphs; references.ts checks those against the store).
import { definitionOf, givesResult, runInputOf } from '../nodes/registry.ts';
import type { CalledInputs, CalledWorkflow, GraphContext, InnerGraphLimits } from '../nodes/types.ts';
import type { ProblemItem } from '../shared/errors.ts';

type Report = (pointer: string, message: string) => void;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Each node's graph rules, in node order. `first`: each node id's index (its first node);
 * `validate` checks an inner graph as a graph of its own (graph.ts's validateWorkflowGraph, handed
 * in: this module sits below it).
 */
export function checkSubgraphNodes<L extends InnerGraphLimits>(
  nodes: unknown[],
  first: ReadonlyMap<string, number>,
  usable: { from: string; to: string }[],
  limits: L,
  validate: (nodes: unknown, edges: unknown, limits: L) => ProblemItem[],
  report: Report,
): void {
  nodes.forEach((node, i) => {
    if (!isObject(node) || !isObject(node.config) || typeof node.id !== 'string' || first.get(node.id) !== i) return;
    const rules = definitionOf(node)?.graphProblems;
    if (!rules) return;
    const id = node.id;
    const graph: GraphContext = {
      edgesIn: usable.filter((e) => e.to === id).length,
      limits,
      validate: (inner, edges, innerLimits) => validate(inner, edges, { ...limits, ...innerLimits }),
      runInputOf,
      givesResult,
    };
    for (const { pointer, message } of rules({ id, config: node.config }, graph))
      report(`/nodes/${i}${pointer}`, message);
  });
}

/** A workflow a graph calls (a node type's `calledWorkflow`), with its pointer in the graph. */
export interface WorkflowReference {
  workflowId: string;
  /** The version it pins, if it does. */
  version?: number;
  pointer: string;
  /** How the node fills the callee's run inputs, its pointers inside the graph. */
  inputs: CalledInputs;
}

export function workflowReferences(nodes: unknown, at = ''): WorkflowReference[] {
  if (!Array.isArray(nodes)) return [];
  return nodes.flatMap((node, i): WorkflowReference[] => {
    if (!isObject(node) || !isObject(node.config)) return [];
    const here = `${at}/nodes/${i}/config`;
    const definition = definitionOf(node);
    const called = definition?.calledWorkflow?.(node.config);
    const found: WorkflowReference[] = called ? [inGraph(called, here)] : [];
    for (const each of definition?.calledWorkflows?.(node.config) ?? []) found.push(inGraph(each, here));
    for (const inner of definition?.innerGraphs?.(node.config) ?? [])
      found.push(...workflowReferences(inner.nodes, `${here}${inner.pointer}`));
    return found;
  });
}

/** A node's call with its pointers inside the graph (`here`: its config's pointer). */
const inGraph = (called: CalledWorkflow, here: string): WorkflowReference => ({
  ...called,
  pointer: `${here}${called.pointer}`,
  inputs: {
    ...called.inputs,
    named: called.inputs.named.map((n) => ({ ...n, pointer: `${here}${n.pointer}` })),
    pointer: `${here}${called.inputs.pointer}`,
  },
});
