// The `workflow` node: another workflow of the run's owner run within this run,
// its inputs mapped from this one's values, its steps `<node>.<its node>` (subgraph.ts).
import type { components } from '../../../generated/api.d.ts';
import {
  assertCalleeInputs,
  innerFailure,
  inputVariables,
  outputIds,
  resultOf,
  typedInputs,
  type Graph,
  type SubgraphDeps,
} from './subgraph.ts';

type WorkflowCallNode = components['schemas']['WorkflowCallNode'];

/**
 * The called workflow's run inputs: each of its variables as `config.inputs` renders it; a node
 * that maps none gives each the node's upstream value (its texts joined when several edges come
 * in); each as its text_input declares it (subgraph.ts typedInputs). A mapping that does not fit
 * the callee's inputs fails the node first (assertCalleeInputs): an input is never filled with
 * the upstream value because its name was not mapped. `render` renders a template of this run.
 */
export async function callInputs(
  graph: Graph,
  node: WorkflowCallNode,
  upstream: unknown,
  render: (source: string) => Promise<string>,
): Promise<Record<string, unknown>> {
  assertCalleeInputs(node, graph);
  const mapped = node.config.inputs ?? {};
  const passThrough = Object.keys(mapped).length === 0;
  const inputs: Record<string, unknown> = {};
  for (const variable of inputVariables(graph))
    inputs[variable] = passThrough ? upstream : await render(mapped[variable]!);
  return typedInputs(graph, inputs);
}

export async function runWorkflowCall(
  deps: SubgraphDeps,
  node: WorkflowCallNode,
  graph: Graph,
  inputs: Record<string, unknown>,
): Promise<unknown> {
  const prefix = `${node.id}.`;
  try {
    return resultOf(await deps.runGraph(graph, inputs, prefix, deps.signal, node.config.workflow_id), outputIds(graph));
  } catch (err) {
    throw innerFailure(err, `Workflow ${node.config.workflow_id}`, prefix);
  }
}
