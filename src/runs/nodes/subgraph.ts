// What `map` and `workflow` nodes share: a graph run inside the run, its
// steps named under the node's (`chunks[3].summary`, `triage.classify`) and its result read from
// its text_outputs. The executor provides `SubgraphRunner`: the same budgets, quotas, hooks and
// cancel as the run's own nodes.
import type { components } from '../../../generated/api.d.ts';
import { RunFailure } from '../../shared/errors.ts';
import { inputsMismatch, mismatchInWords } from '../../nodes/calledInputs.ts';
import { definitionOf, givesResult, runInputOf } from '../../nodes/registry.ts';
import { isOfType, toText } from '../values.ts';

type WorkflowNode = components['schemas']['WorkflowNode'];
/** A graph as the executor runs it (executor.ts Graph; not imported, so this module stays below it). */
export interface Graph {
  nodes: WorkflowNode[];
  edges: components['schemas']['WorkflowEdge'][];
  /** A called workflow's version (its templates' `workflow.version`). */
  version?: number;
}

/** The executor's hooks (executor.ts ExecutionHooks), as far as a sub-graph renames their steps. */
export interface StepHooks<R extends { nodeId: string }> {
  onStepStart?(node: WorkflowNode, input: string): Promise<void> | void;
  onStepDelta?(node: WorkflowNode, text: string): void;
  onStepRetry?(node: WorkflowNode, attempt: number, error: unknown, delayMs: number): void;
  onStepEnd?(report: R): Promise<void> | void;
  onStepSkipped?(node: WorkflowNode): Promise<void> | void;
  shouldContinue?(): Promise<boolean> | boolean;
  /** A map's items so far (its items' own steps send no events: this counts them). */
  onMapProgress?(node: WorkflowNode, progress: MapProgress): void;
}

/** A map's count of its items: all of them, those that completed, and those that failed (skipped or given the default included). */
export interface MapProgress {
  total: number;
  done: number;
  failed: number;
}

/** A step id is stored in run_steps.node_id (191 characters, migration 0001). */
export const STEP_ID_MAX = 191;
/** The longest chain of called workflows (a run-time guard: saves refuse cycles, but a called workflow may change after). */
export const CALL_DEPTH_MAX = 5;

/** Runs `graph` within the run with `inputs`, its steps named `prefix` + node id; resolves to its output (by text_output id). */
export type SubgraphRunner = (
  graph: Graph,
  inputs: Record<string, unknown>,
  prefix: string,
  signal: AbortSignal,
  workflowId?: string,
) => Promise<Record<string, unknown>>;

/** Reads a workflow of the run's owner for a node that calls it (or fails the node). */
export type WorkflowLoader = (workflowId: string, version?: number) => Promise<Graph>;

export interface SubgraphDeps {
  runGraph: SubgraphRunner;
  loadWorkflow: WorkflowLoader;
  signal: AbortSignal;
  /** Tells of a map's progress (the run's events). */
  progress?: (node: WorkflowNode, progress: MapProgress) => void;
  /** The run's count of map items (RUN_MAX_ITEMS, compute/runCaps.ts), when it has caps. */
  caps?: { mapItems(count: number, nodeId: string): void };
}

/** The hooks of a graph run inside another: the same, with every step id under `prefix`. */
export function prefixedHooks<R extends { nodeId: string }>(hooks: StepHooks<R>, prefix: string): StepHooks<R> {
  const named = <N extends WorkflowNode>(node: N): N => ({ ...node, id: stepId(prefix, node.id) });
  const wrapped: StepHooks<R> = {};
  if (hooks.onStepStart) wrapped.onStepStart = (node, input) => hooks.onStepStart!(named(node), input);
  if (hooks.onStepDelta) wrapped.onStepDelta = (node, text) => hooks.onStepDelta!(named(node), text);
  if (hooks.onStepRetry)
    wrapped.onStepRetry = (node, attempt, error, delayMs) => hooks.onStepRetry!(named(node), attempt, error, delayMs);
  if (hooks.onStepEnd)
    wrapped.onStepEnd = (report: R) => hooks.onStepEnd!({ ...report, nodeId: stepId(prefix, report.nodeId) });
  if (hooks.onStepSkipped) wrapped.onStepSkipped = (node) => hooks.onStepSkipped!(named(node));
  if (hooks.shouldContinue) wrapped.shouldContinue = hooks.shouldContinue;
  if (hooks.onMapProgress) wrapped.onMapProgress = (node, progress) => hooks.onMapProgress!(named(node), progress);
  return wrapped;
}

/**
 * The steps an earlier attempt finished inside a sub-graph (a run taken over resumes after them,
 * attempt.ts): those named under `prefix`, by their id inside it.
 */
export function resumedWithin<T>(resumed: ReadonlyMap<string, T>, prefix: string): Map<string, T> {
  const inside = new Map<string, T>();
  for (const [id, text] of resumed) if (id.startsWith(prefix)) inside.set(id.slice(prefix.length), text);
  return inside;
}

function stepId(prefix: string, id: string): string {
  const full = prefix + id;
  if (full.length > STEP_ID_MAX) {
    throw new RunFailure(
      'workflow_depth',
      `The step id "${full.slice(0, 80)}…" is longer than ${STEP_ID_MAX} characters: nest fewer maps and workflows, or use shorter node ids.`,
    );
  }
  return full;
}

/** The ids of the graph's result nodes (text_outputs), in its order: what its result is read from. */
export const outputIds = (graph: Graph): string[] => graph.nodes.filter(givesResult).map((n) => n.id);

/** A graph's result: its one text_output's value (null when skipped), or the object of them when it has several. */
export function resultOf(output: Record<string, unknown>, outputs: readonly string[]): unknown {
  if (outputs.length === 1) return output[outputs[0]!] ?? null;
  return output;
}

/** The run inputs a graph reads (its text_inputs' variables). */
export const inputVariables = (graph: Graph): string[] => graph.nodes.flatMap((n) => runInputOf(n)?.variable ?? []);

/**
 * Fails a node that calls a workflow whose run inputs its mapping does not fit (a name it maps that
 * the callee has no input of, an input of the callee it leaves unmapped): the save refused that, but
 * an unpinned callee may have changed since, and filling its inputs some other way would run it on
 * values the caller never meant for them.
 */
export function assertCalleeInputs(node: WorkflowNode, graph: Graph): void {
  const called = definitionOf(node)?.calledWorkflow?.(node.config);
  if (!called) return;
  const calleeInputs = inputVariables(graph);
  const mismatch = inputsMismatch(called.inputs, calleeInputs);
  if (!mismatch) return;
  const at = called.version === undefined ? 'as it is now' : `at version ${called.version}`;
  throw new RunFailure(
    'subworkflow_inputs_mismatch',
    `Workflow ${called.workflowId} ${at} does not fit this node's mapping: ${mismatchInWords(mismatch, calleeInputs)}.`,
  );
}

/**
 * A sub-graph's run inputs as its text_inputs declare them (the service checks a run's own inputs
 * when it starts; these come from values of this run): an untyped (string) input takes a value as
 * its text, a typed one a JSON text of its type parsed; any other mismatch fails with
 * `schema_violation`.
 */
export function typedInputs(graph: Graph, inputs: Record<string, unknown>): Record<string, unknown> {
  const typed: Record<string, unknown> = {};
  for (const node of graph.nodes) {
    const input = runInputOf(node);
    if (!input || !Object.hasOwn(inputs, input.variable)) continue;
    typed[input.variable] = asDeclared(inputs[input.variable], input.type, input.variable);
  }
  return typed;
}

function asDeclared(value: unknown, type: string | undefined, variable: string): unknown {
  if (isOfType(value, type)) return value;
  if (type === undefined || type === 'string') return toText(value);
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (isOfType(parsed, type)) return parsed;
    } catch {
      // not JSON: said below
    }
  }
  const an = type === 'integer' || type === 'object' || type === 'array' ? 'an' : 'a';
  throw new RunFailure(
    'schema_violation',
    `The input "${variable}" takes ${an} ${type}; it got ${toText(value).slice(0, 60)}.`,
  );
}

/**
 * A failure inside a sub-graph, as the failure of the node that ran it (the run's error names that
 * node, its message the inner step): `label` says what failed ("Item 3", "Workflow wf_…").
 */
export function innerFailure(err: unknown, label: string, prefix: string): unknown {
  if (!(err instanceof RunFailure) || err.code === 'cancelled' || err.code === 'timeout') return err;
  const step = err.nodeId === null ? '' : ` at step ${prefix}${err.nodeId}`;
  return new RunFailure(err.code, `${label} failed${step}: ${err.message}`);
}

/**
 * The workflow a node calls, read through `load` (the run owner's live workflows), after the
 * run-time guards: a workflow already on the call stack `calls` (the run's own first) or a chain
 * deeper than CALL_DEPTH_MAX fails with `workflow_depth`; one that is not the owner's (or gone)
 * with `workflow_not_found`.
 */
export async function loadCalled(
  load: ((id: string, version?: number) => Promise<Graph | undefined>) | undefined,
  calls: readonly string[],
  workflowId: string,
  version?: number,
): Promise<Graph> {
  if (calls.includes(workflowId)) {
    throw new RunFailure(
      'workflow_depth',
      `Workflow ${workflowId} calls itself (${[...calls, workflowId].join(' -> ')}).`,
    );
  }
  if (calls.length > CALL_DEPTH_MAX)
    throw new RunFailure(
      'workflow_depth',
      `The chain of called workflows is deeper than ${CALL_DEPTH_MAX} (${[...calls, workflowId].join(' -> ')}).`,
    );
  const graph = load ? await load(workflowId, version) : undefined;
  if (!graph)
    throw new RunFailure(
      'workflow_not_found',
      `No workflow ${workflowId}${version === undefined ? '' : ` at version ${version}`} of this run's owner.`,
    );
  return graph;
}
