import type { ProblemItem } from '../shared/errors.ts';
import { validateWorkflowFields, validateWorkflowGraph } from '../workflows/graph.ts';
import { graphLimits, type Workflow, type WorkflowContext, type WorkflowCreate } from '../workflows/service.ts';

// The workflow editor's form (name, description, and the graph as JSON) read into the body the
// API's createWorkflow / updateWorkflow take, and checked by the same rules the API's 422s come
// from (validateWorkflowFields and validateWorkflowGraph), so the console saves nothing the API
// would refuse and names each problem by the same JSON pointer.

export interface EditorForm {
  name: string;
  description: string;
  /** The graph as the user wrote it: `{"nodes": [...], "edges": [...]}`. */
  graph: string;
}

/** The graph's JSON as the editor shows it: the round trip of a saved workflow gives the same text back. */
export const graphJson = (workflow: Pick<Workflow, 'nodes' | 'edges'>): string =>
  JSON.stringify({ nodes: workflow.nodes, edges: workflow.edges }, null, 2);

/** A problem with the graph's text itself (not JSON, not an object with nodes and edges), at `/graph`. */
function parseGraph(text: string): { nodes?: unknown; edges?: unknown; problem?: ProblemItem } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: { pointer: '/graph', message: `is not JSON: ${(err as Error).message}` } };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: { pointer: '/graph', message: 'must be a JSON object with "nodes" and "edges"' } };
  const unknown = Object.keys(value).filter((k) => k !== 'nodes' && k !== 'edges');
  if (unknown.length)
    return {
      problem: {
        pointer: '/graph',
        message: `has ${unknown.map((k) => JSON.stringify(k)).join(', ')}: only "nodes" and "edges" belong here`,
      },
    };
  const { nodes, edges } = value as { nodes?: unknown; edges?: unknown };
  return { nodes: nodes ?? [], edges: edges ?? [] };
}

/** The body to save, or every problem found, by pointer (`/name`, `/graph`, `/nodes/2/config/model`). */
export function checkEditorForm(
  ctx: Pick<WorkflowContext, 'config'>,
  form: EditorForm,
): { body: WorkflowCreate } | { problems: ProblemItem[] } {
  const fields = validateWorkflowFields({ name: form.name, description: form.description }, 'create');
  const graph = parseGraph(form.graph);
  if (graph.problem) return { problems: [...fields, graph.problem] };
  const problems = [...fields, ...validateWorkflowGraph(graph.nodes, graph.edges, graphLimits(ctx.config))];
  if (problems.length) return { problems };
  return {
    body: {
      name: form.name,
      description: form.description,
      nodes: graph.nodes as WorkflowCreate['nodes'],
      edges: graph.edges as WorkflowCreate['edges'],
    },
  };
}
