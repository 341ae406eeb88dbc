// The work of the nodes that make lists and run graphs of their own, for their steps (runs/steps/):
// `split` (in the compute pool), `map` (map.ts) and `workflow` (workflowCall.ts).
import type { components } from '../../../generated/api.d.ts';
import type { RunBudget } from '../compute/budget.ts';
import type { RunCaps } from '../compute/runCaps.ts';
import { runMap } from './map.ts';
import { loadCalled, type Graph, type SubgraphDeps } from './subgraph.ts';
import { callInputs, runWorkflowCall } from './workflowCall.ts';
import type { Produced } from '../values.ts';

type Schemas = components['schemas'];

export interface CompositeContext {
  deps: SubgraphDeps;
  compute: RunBudget['compute'];
  render(source: string): Promise<string>;
  /** Each workflow node's called graph and inputs, from its input (prepareCall) to its work. */
  prepared: Map<string, { graph: Graph; inputs: Record<string, unknown> }>;
}

/** What the executor hands over for a run (or a graph run inside one). */
export interface CompositeSetup {
  compute: RunBudget['compute'];
  render(source: string): Promise<string>;
  signal: AbortSignal;
  /** Where a map tells of its progress (the graph's hooks). */
  progress: SubgraphDeps['progress'];
  /** The run's caps (compute/runCaps.ts): a map counts its items there. */
  caps: RunCaps | undefined;
  /** The workflows on the call stack, the run's own first. */
  calls: readonly string[];
  /** The run owner's workflows, by id and pinned version. */
  workflows: ((workflowId: string, version?: number) => Promise<Graph | undefined>) | undefined;
  /** Runs a graph inside the run (executor.ts executeGraph with the run's options), its steps under `prefix`, `calls` its call stack; `calledId` a called workflow's id. */
  execute(
    graph: Graph,
    inputs: Record<string, unknown>,
    prefix: string,
    signal: AbortSignal,
    calls: readonly string[],
    calledId?: string,
  ): Promise<Record<string, unknown>>;
}

export function compositeContext(setup: CompositeSetup): CompositeContext {
  const { calls } = setup;
  return {
    compute: setup.compute,
    render: setup.render,
    prepared: new Map(),
    deps: {
      signal: setup.signal,
      ...(setup.caps ? { caps: setup.caps } : {}),
      ...(setup.progress ? { progress: setup.progress } : {}),
      loadWorkflow: (id, version) => loadCalled(setup.workflows, calls, id, version),
      runGraph: (graph, inputs, prefix, signal, workflowId) =>
        setup.execute(graph, inputs, prefix, signal, workflowId ? [...calls, workflowId] : calls, workflowId),
    },
  };
}

/** A split node splits its `text` template rendered, else the upstream texts joined. */
export const splitSource = (
  node: Schemas['SplitNode'],
  joined: string,
  render: (source: string) => Promise<string>,
): Promise<string> | string => (node.config.text === undefined ? joined : render(node.config.text));

/** A workflow node's input, as logged: the called workflow's run inputs (its graph kept for the work). `before`: its upstream outputs. */
export async function prepareCall(
  ctx: CompositeContext,
  node: Schemas['WorkflowCallNode'],
  before: readonly Produced[],
): Promise<string> {
  const graph = await ctx.deps.loadWorkflow(node.config.workflow_id, node.config.version);
  const upstream = before.length === 1 ? before[0]!.value : before.map((p) => p.text).join('\n\n');
  const inputs = await callInputs(graph, node, upstream, ctx.render);
  ctx.prepared.set(node.id, { graph, inputs });
  return JSON.stringify(inputs);
}

/** A split node's list, made in the compute pool from its input. */
export function splitWork(ctx: CompositeContext, node: Schemas['SplitNode'], input: string): Promise<unknown> {
  const { by, separator, size, overlap, max_items: maxItems } = node.config;
  const options = {
    ...(separator !== undefined && { separator }),
    ...(size !== undefined && { size }),
    ...(overlap !== undefined && { overlap }),
  };
  return ctx.compute('splitText', { text: input, by, ...options, maxItems: maxItems ?? 1000 }, ctx.deps.signal);
}

/** A map node's list of results. `upstream`: the value of its one edge in (the list). */
export const mapWork = (ctx: CompositeContext, node: Schemas['MapNode'], upstream: unknown): Promise<unknown> =>
  runMap(ctx.deps, node, upstream);

/** A workflow node's value: the called workflow's result (its graph and inputs from prepareCall). */
export function workflowWork(ctx: CompositeContext, node: Schemas['WorkflowCallNode']): Promise<unknown> {
  const call = ctx.prepared.get(node.id)!;
  return runWorkflowCall(ctx.deps, node, call.graph, call.inputs);
}
