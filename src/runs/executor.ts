import { RunFailure } from '../shared/errors.ts';
import { loadConfig } from '../config.ts';
import { countModelUse } from '../ops/metrics.ts';
import { nodeDefinition } from '../nodes/registry.ts';
import type { TemplateScope } from '../workflows/templates.ts';
import { runBudget, type RunBudget } from './compute/budget.ts';
import { scopeFor } from './compute/scope.ts';
import { HttpNodes, type HttpNodeDeps } from './httpRequest.ts';
import { httpNodeDeps } from './httpNodeDeps.ts';
import type { ModelRouter, Usage } from './providers/index.ts';
import type { CostNanos } from '../shared/prices.ts';
import { produced, type Produced } from './values.ts';
import { continuedOutput, followed } from './branching.ts';
import { TextBudget } from './textBudget.ts';
import { spentUsage, toFailure } from './failures.ts';
import { compositeContext } from './nodes/composite.ts';
import { prefixedHooks, resumedWithin } from './nodes/subgraph.ts';
import type { ExecutionHooks, RunState, WorkflowEdge, WorkflowNode } from './runState.ts';
import { stepOf } from './steps/index.ts';
import { AwaitingAnswer, type ApprovalLookup } from './awaitingAnswer.ts';
import { inNodeSpan, nodeFailed } from '../shared/tracing.ts';

export type { ExecutionHooks, StepReport, WorkflowEdge, WorkflowNode } from './runState.ts';

export interface Graph {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  /** The version of a called workflow's graph (its `workflow.version` in templates). */
  version?: number;
}

export interface Execution {
  /** Keyed by `text_output` node id: the formatted text, or for `json` the parsed value. */
  output: Record<string, unknown>;
}

/** What a step has done so far, for the log of its failure. */
interface StepProgress {
  input: string;
  usage: Usage | null;
  started: boolean;
}

export type ExecuteOptions = {
  /** Node id -> output value, for the nodes an earlier attempt finished (a run taken over resumes after them). */
  resumed?: ReadonlyMap<string, unknown>;
  signal?: AbortSignal;
  hooks?: ExecutionHooks;
  budget?: RunBudget;
  http?: HttpNodeDeps;
  /** The run owner's workflows (by id, pinned version), for workflow nodes and maps with workflow_id. */
  workflows?: (workflowId: string, version?: number) => Promise<Graph | undefined>;
  /** The workflows on the call stack, the run's own first: a called one already there is a cycle. */
  calls?: readonly string[];
  /** A graph run inside a run (a map's item, a called workflow) shares the run's size caps. */
  sizes?: TextBudget;
  /** What templates read as `run` and `workflow` (templates.ts TemplateScope), from the stored run. */
  context?: Pick<TemplateScope, 'run' | 'workflow'>;
  /** Approval nodes' answers (the run's own graph only). */
  approvals?: ApprovalLookup;
};

/**
 * Runs a validated graph: every node starts as soon as all its predecessors are done, so
 * independent branches run concurrently. The first failure aborts the rest. An edge out of a
 * condition is followed only when its `branch` is the condition's text; a node none of whose
 * edges in is followed (its sources skipped, or their branches not taken) is skipped, and reads
 * only the texts of the edges that were followed.
 */
export async function executeGraph(
  graph: Graph,
  inputs: Record<string, unknown>,
  models: ModelRouter,
  options: ExecuteOptions = {},
): Promise<Execution> {
  const controller = new AbortController();
  const run = startRun(graph, inputs, models, options, controller.signal);
  // A node waiting for an answer (and those after it) stops no other branch: they finish, then the
  // execution ends waiting.
  const waits: AwaitingAnswer[] = [];
  const waiting = (err: unknown) => {
    if (!(err instanceof AwaitingAnswer)) throw err;
    if (!waits.some((w) => w.nodeId === err.nodeId)) waits.push(err);
    return null;
  };
  try {
    await Promise.all(graph.nodes.map((node) => runNode(run, node).catch(waiting)));
    if (waits.length) throw new WaitingRun(waits);
  } catch (err) {
    if (err instanceof WaitingRun) throw err;
    controller.abort(err);
    // Let nodes already running settle so their logs are written before the run is finished.
    await Promise.allSettled(run.texts.values());
    throw err instanceof RunFailure ? err : new RunFailure('internal_error', (err as Error).message);
  }
  return { output: run.output };
}

/** The run's state before any node starts; `stop` aborts it on the first failure. */
function startRun(
  graph: Graph,
  inputs: Record<string, unknown>,
  models: ModelRouter,
  options: ExecuteOptions,
  stop: AbortSignal,
): RunState {
  const budget = options.budget ?? defaultBudget();
  const signal = AbortSignal.any([stop, ...[options.signal, budget.caps?.signal].filter((s) => s !== undefined)]);
  const edgesIn = new Map<string, WorkflowEdge[]>(graph.nodes.map((n) => [n.id, []]));
  for (const edge of graph.edges) edgesIn.get(edge.to)?.push(edge);
  const scope: TemplateScope = { inputs, nodes: {}, ...options.context };
  const sizes = options.sizes ?? new TextBudget(budget);
  const render = (source: string) =>
    budget.compute('renderTemplate', { source, scope: scopeFor(source, scope) }, signal);
  const hooks = options.hooks ?? {};
  const calls = options.calls ?? [];
  const composite = compositeContext({
    compute: budget.compute,
    render,
    signal,
    caps: budget.caps,
    progress: hooks.onMapProgress,
    calls,
    workflows: options.workflows,
    execute: async (sub, subInputs, prefix, subSignal, subCalls, calledId) => {
      const resumed = resumedWithin(options.resumed ?? new Map(), prefix);
      // `run` stays the run the user sees; `workflow` becomes a called workflow's own (a map's body keeps it).
      const workflow = calledId !== undefined ? { id: calledId, version: sub.version ?? 0 } : scope.workflow;
      const subOptions: ExecuteOptions = {
        ...options,
        signal: subSignal,
        hooks: prefixedHooks(hooks, prefix),
        budget,
        sizes: sizes.forSubgraph(),
        calls: subCalls,
        resumed,
        approvals: undefined, // a map's item or a called workflow has no run of its own to pause
        context: { ...(scope.run ? { run: scope.run } : {}), ...(workflow ? { workflow } : {}) },
      };
      return (await executeGraph(sub, subInputs, models, subOptions)).output;
    },
  });
  return {
    inputs,
    models,
    hooks,
    signal,
    byId: new Map(graph.nodes.map((n) => [n.id, n])),
    edgesIn,
    texts: new Map(),
    scope,
    verdicts: new Map(),
    attempts: new Map(),
    output: {},
    sizes,
    http: new HttpNodes(options.http ?? httpNodeDeps({ config: loadConfig({}) }, 0)),
    resumed: options.resumed ?? new Map(),
    render,
    budget,
    composite,
    ...(options.approvals ? { approvals: options.approvals } : {}),
  };
}

/** The execution ended with these approval nodes waiting for their answers (the run waits). */
export class WaitingRun extends Error {
  readonly waits: readonly AwaitingAnswer[];
  constructor(waits: readonly AwaitingAnswer[]) {
    super('The run waits for an answer.');
    this.waits = waits;
  }
}

/** A node's output, started once however many nodes wait on it. */
function runNode(run: RunState, node: WorkflowNode): Promise<Produced | null> {
  let pending = run.texts.get(node.id);
  if (pending) return pending;
  pending = nodeText(run, node);
  run.texts.set(node.id, pending);
  return pending;
}

/** Waits for the node's sources, then skips it (null) when no edge into it was followed, or runs it. */
async function nodeText(run: RunState, node: WorkflowNode): Promise<Produced | null> {
  const incoming = run.edgesIn.get(node.id) ?? [];
  const sources = await Promise.all(incoming.map((edge) => runNode(run, run.byId.get(edge.from)!)));
  const before = followedTexts(incoming, sources);
  if (run.signal.aborted)
    throw run.signal.reason instanceof RunFailure
      ? run.signal.reason
      : new RunFailure('cancelled', 'The run was cancelled.');
  if (incoming.length > 0 && before.length === 0) {
    await run.hooks.onStepSkipped?.(node);
    return null;
  }
  if (run.resumed.has(node.id)) return resumeStep(run, node, run.resumed.get(node.id), before);
  if (run.hooks.shouldContinue && !(await run.hooks.shouldContinue())) {
    throw new RunFailure('cancelled', 'The run was cancelled.', node.id);
  }
  return inNodeSpan(node, isWaiting, () => runStep(run, node, before));
}

const isWaiting = (err: unknown) => err instanceof AwaitingAnswer;

/** The outputs of the edges followed: their source ran, and a condition's branch matches its verdict. */
function followedTexts(incoming: WorkflowEdge[], sources: (Produced | null)[]): Produced[] {
  return incoming.flatMap((edge, i) => {
    const out = sources[i];
    return out === null || out === undefined || !followed(edge, out) ? [] : [out];
  });
}

/** Runs one node as a logged step: start, its work, the size caps, end. */
async function runStep(run: RunState, node: WorkflowNode, before: Produced[]): Promise<Produced> {
  const step: StepProgress = { input: '', usage: null, started: false };
  try {
    run.budget.caps?.step();
    await run.budget.pace?.(run.signal);
    const how = stepOf(node);
    step.input = how.input ? await how.input(run, node, before) : before.map((p) => p.text).join('\n\n');
    await run.hooks.onStepStart?.(node, step.input);
    step.started = true;
    const done = await how.work(run, node, step.input, before);
    step.usage = done.usage;
    const out: Produced = { ...produced(done.value), ...(done.route !== undefined ? { route: done.route } : {}) };
    run.sizes.keep(out.text);
    const outputIsJson = typeof out.value !== 'string';
    await run.hooks.onStepEnd?.({
      nodeId: node.id,
      nodeType: node.type,
      status: 'completed',
      input: step.input,
      output: out.text,
      outputIsJson,
      usage: step.usage,
      ...priced(run, node, step.usage),
      error: null,
      attempts: run.attempts.get(node.id) ?? null,
      ...(out.route !== undefined ? { case: out.route } : {}),
    });
    run.scope.nodes[node.id] = { output: out.value };
    return out;
  } catch (err) {
    if (err instanceof AwaitingAnswer && !run.signal.aborted) {
      await run.hooks.onStepWaiting?.(node);
      throw err;
    }
    return stepFailed(run, node, step, err);
  }
}

/**
 * A node an earlier attempt finished, taken up again without running it (no provider call, no
 * log, no event): its text as logged, and what it left in the run's state (a condition's verdict,
 * a text_output's share of the output, made again from its inputs, which are restored too).
 */
async function resumeStep(run: RunState, node: WorkflowNode, value: unknown, before: Produced[]): Promise<Produced> {
  const out: Produced = produced(value);
  await stepOf(node).resume?.(run, node, out, before);
  run.sizes.keep(out.text);
  run.scope.nodes[node.id] = { output: out.value };
  return out;
}

/** Logs the step's failure; an llm_call or http_request with `on_error: continue` goes on (continuedOutput), any other stops the run. */
async function stepFailed(run: RunState, node: WorkflowNode, step: StepProgress, err: unknown): Promise<Produced> {
  const failure = toFailure(err, node, run.signal);
  nodeFailed(
    failure.code === 'cancelled' || failure.code === 'timeout' ? 'cancelled' : 'failed',
    failure,
    failure.code,
  );
  if (!step.started) await run.hooks.onStepStart?.(node, step.input); // a template that did not render: logged as the node's failure
  // The tokens of an answer that arrived count, whatever failed after it: the step's own error
  // carries them, also when the run's stop (a cancel, another node's failure) names the failure.
  const usage = step.usage ?? failure.usage ?? spentUsage(err) ?? null;
  await run.hooks.onStepEnd?.({
    nodeId: node.id,
    nodeType: node.type,
    status: failure.code === 'cancelled' || failure.code === 'timeout' ? 'cancelled' : 'failed',
    input: step.input,
    output: null,
    usage,
    ...priced(run, node, usage),
    error: failure,
    attempts: run.attempts.get(node.id) ?? null,
  });
  // on_error: continue — never for a cancel or the run's own timeout, which stop everything.
  // A routable type's config (LlmCallNode, HttpRequestNode) says whether it goes on, and with what.
  const config = node.config as { on_error?: unknown; default?: unknown };
  if (
    nodeDefinition(node.type).routable &&
    config.on_error === 'continue' &&
    !run.signal.aborted &&
    failure.code !== 'cancelled'
  ) {
    const out = continuedOutput({ id: node.id, config }, run.edgesIn, failure);
    run.scope.nodes[node.id] = { output: out.value };
    return out;
  }
  throw failure;
}

/**
 * The model a node called (a node whose config names a `model`: llm_call, agent) and what its
 * tokens cost at the price table now, as the call was made with it, counted in this process's
 * metrics; nothing for other nodes. Called once per step end, so each step counts once.
 */
function priced(run: RunState, node: WorkflowNode, usage: Usage | null): { model?: string; cost?: CostNanos | null } {
  const model = (node.config as { model?: unknown } | undefined)?.model;
  if (typeof model !== 'string') return {};
  const cost = usage ? run.models.cost(model, usage) : null;
  if (usage) countModelUse(run.models.metricsLabel(model), usage, cost);
  return { model, cost };
}

/** Without a budget of the caller's (no run, no user): the configured defaults, as an anonymous owner, steps not paced. */
let fallbackBudget: RunBudget | undefined;
const defaultBudget = () => (fallbackBudget ??= runBudget(loadConfig({ USER_STEPS_PER_SECOND: '0' }), 'anonymous'));
