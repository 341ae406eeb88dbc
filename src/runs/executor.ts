import type { components } from '../../generated/api.d.ts';
import type { TemplateScope } from '../workflows/templates.ts';
import { RunFailure } from '../shared/errors.ts';
import { loadConfig } from '../config.ts';
import { runBudget, type RunBudget } from './compute/budget.ts';
import { scopeFor } from './compute/scope.ts';
import { HttpNodes, type HttpNodeDeps } from './httpRequest.ts';
import { httpNodeDeps } from './httpNodeDeps.ts';
import type { ChatRequest, ModelRouter, ProviderError, Usage } from './providers/index.ts';
import { formatOutput, produced, type Produced } from './values.ts';
import { chooseCase, compare, continuedOutput, followed } from './branching.ts';
import { isEmpty } from './compute/switchCase.ts';
import { TextBudget } from './textBudget.ts';
import { toFailure } from './failures.ts';
import { compositeContext, compositeWork, prepareCall, splitSource, type CompositeContext } from './nodes/composite.ts';
import { prefixedHooks, resumedWithin, type StepHooks } from './nodes/subgraph.ts';

export type WorkflowNode = components['schemas']['WorkflowNode'];
export type WorkflowEdge = components['schemas']['WorkflowEdge'];

export interface Graph {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

export interface StepReport {
  nodeId: string;
  nodeType: WorkflowNode['type'];
  status: 'completed' | 'failed' | 'cancelled';
  input: string;
  /** The output as text (a value that is not a string as its JSON); null unless completed. */
  output: string | null;
  /** The output is a JSON value other than a string, whose JSON `output` is. */
  outputIsJson?: boolean;
  usage: Usage | null;
  error: RunFailure | null;
  /** Calls to the model provider (1 plus retries); null for a node that made none. */
  attempts: number | null;
}

export interface ExecutionHooks extends Pick<StepHooks<StepReport>, 'onMapProgress'> {
  onStepStart?(node: WorkflowNode, input: string): Promise<void> | void;
  /** A chunk of an llm_call's answer as the provider streams it (the texts, in order, make its output). */
  onStepDelta?(node: WorkflowNode, text: string): void;
  /** An llm_call whose streamed answer broke off is tried again: the chunks it streamed so far are void. */
  onStepRetry?(node: WorkflowNode, attempt: number, error: ProviderError): void;
  onStepEnd?(report: StepReport): Promise<void> | void;
  /** The node will not run: every way into it came through a branch not taken. */
  onStepSkipped?(node: WorkflowNode): Promise<void> | void;
  /** Asked before each node starts; false stops the run as cancelled (the run's own state). */
  shouldContinue?(): Promise<boolean> | boolean;
}

export interface Execution {
  /** Keyed by `text_output` node id: the formatted text, or for `json` the parsed value. */
  output: Record<string, unknown>;
}

/** One run's working state, shared by its nodes. */
interface RunState {
  inputs: Record<string, unknown>;
  models: ModelRouter;
  hooks: ExecutionHooks;
  signal: AbortSignal;
  byId: Map<string, WorkflowNode>;
  edgesIn: Map<string, WorkflowEdge[]>;
  /** Each node's output once done; null when it was skipped. */
  texts: Map<string, Promise<Produced | null>>;
  /** What templates see: the run's inputs and each finished node's output. */
  scope: TemplateScope;
  /** Each condition's text (`true` / `false`), set when its sides are rendered. */
  verdicts: Map<string, string>;
  /** Each llm_call's count of provider calls so far, as its provider reports them (onAttempt). */
  attempts: Map<string, number>;
  output: Record<string, unknown>;
  sizes: TextBudget;
  http: HttpNodes;
  /** The texts of the nodes an earlier attempt of the run finished: they are not run again. */
  resumed: ReadonlyMap<string, unknown>;
  render(source: string): Promise<string>;
  budget: RunBudget;
  /** What split, map and workflow nodes work with (nodes/composite.ts). */
  composite: CompositeContext;
}

/** What a step has done so far, for the log of its failure. */
interface StepProgress {
  input: string;
  usage: Usage | null;
  started: boolean;
}

type LlmCallNode = components['schemas']['LlmCallNode'];
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
  try {
    await Promise.all(graph.nodes.map((node) => runNode(run, node)));
  } catch (err) {
    controller.abort(err);
    // Let nodes already running settle so their logs are written before the run is finished.
    await Promise.allSettled(run.texts.values());
    throw err instanceof RunFailure ? err : new RunFailure('internal_error', (err as Error).message);
  }
  return { output: run.output };
}

/** The run's state before any node starts; `stop` aborts it on the first failure. */
function startRun(graph: Graph, inputs: Record<string, unknown>, models: ModelRouter, options: ExecuteOptions, stop: AbortSignal): RunState {
  const budget = options.budget ?? defaultBudget();
  const signal = AbortSignal.any([stop, ...[options.signal, budget.caps?.signal].filter((s) => s !== undefined)]);
  const edgesIn = new Map<string, WorkflowEdge[]>(graph.nodes.map((n) => [n.id, []]));
  for (const edge of graph.edges) edgesIn.get(edge.to)?.push(edge);
  const scope: TemplateScope = { inputs, nodes: {} };
  const sizes = options.sizes ?? new TextBudget(budget);
  const render = (source: string) => budget.compute('renderTemplate', { source, scope: scopeFor(source, scope) }, signal);
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
    execute: async (sub, subInputs, prefix, subSignal, subCalls) => {
      const resumed = resumedWithin(options.resumed ?? new Map(), prefix);
      const subOptions: ExecuteOptions = { ...options, signal: subSignal, hooks: prefixedHooks(hooks, prefix), budget, sizes: sizes.forSubgraph(), calls: subCalls, resumed };
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
  };
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
  if (run.signal.aborted) throw run.signal.reason instanceof RunFailure ? run.signal.reason : new RunFailure('cancelled', 'The run was cancelled.');
  if (incoming.length > 0 && before.length === 0) {
    await run.hooks.onStepSkipped?.(node);
    return null;
  }
  if (run.resumed.has(node.id)) return resumeStep(run, node, run.resumed.get(node.id), before);
  if (run.hooks.shouldContinue && !(await run.hooks.shouldContinue())) {
    throw new RunFailure('cancelled', 'The run was cancelled.', node.id);
  }
  return runStep(run, node, before);
}

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
    step.input = node.type === 'http_request' ? await run.http.prepare(node, run.render) : await inputOf(node, before, run.inputs, run.render, run.verdicts, run.composite);
    await run.hooks.onStepStart?.(node, step.input);
    step.started = true;
    const done = await stepWork(run, node, step.input, before);
    step.usage = done.usage;
    const out: Produced = { ...produced(done.value), ...(done.route !== undefined ? { route: done.route } : {}) };
    run.sizes.keep(out.text);
    const outputIsJson = typeof out.value !== 'string';
    await run.hooks.onStepEnd?.({ nodeId: node.id, nodeType: node.type, status: 'completed', input: step.input, output: out.text, outputIsJson, usage: step.usage, error: null, attempts: run.attempts.get(node.id) ?? null });
    run.scope.nodes[node.id] = { output: out.value };
    return out;
  } catch (err) {
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
  if (node.type === 'switch') out.route = await chooseCase(run.budget, node, run.scope, before, run.signal); // pure: chosen again
  if (node.type === 'condition') run.verdicts.set(node.id, out.text);
  if (node.type === 'text_output') {
    const value = formatOutput(node.config.format, before);
    run.sizes.output(node.id, value);
    run.output[node.id] = value;
  }
  run.sizes.keep(out.text);
  run.scope.nodes[node.id] = { output: out.value };
  return out;
}

/** What the node does with its input: pass it on, give its verdict, ask a model, or write the run's output. */
async function stepWork(run: RunState, node: WorkflowNode, input: string, before: Produced[]): Promise<{ value: unknown; usage: Usage | null; route?: string }> {
  switch (node.type) {
    case 'coalesce':
      return { value: (before.find((p) => !isEmpty(p.value)) ?? produced('')).value, usage: null };
    case 'switch':
      // The upstream value goes on down the chosen case's edges, not the verdict.
      return { value: before[0]?.value ?? '', usage: null, route: await chooseCase(run.budget, node, run.scope, before, run.signal) };
    case 'text_input':
      return { value: await inputValue(run, node), usage: null };
    case 'template':
      return { value: input, usage: null };
    case 'condition':
      return { value: run.verdicts.get(node.id)!, usage: null };
    case 'llm_call': {
      const result = await callModel(run, node, input);
      return { value: await answerValue(run, node, result.content), usage: result.usage };
    }
    case 'http_request':
      return { value: await run.http.send(node, run.signal, (attempt) => void run.attempts.set(node.id, attempt)), usage: null };
    case 'text_output': {
      const value = formatOutput(node.config.format, before);
      run.sizes.output(node.id, value);
      run.output[node.id] = value;
      return { value, usage: null };
    }
    default:
      return { value: await compositeWork(run.composite, node, input, before.length === 1 ? before[0]!.value : undefined), usage: null };
  }
}

type TextInputNode = components['schemas']['TextInputNode'];

/** A text_input's run input (its type was checked when the run started); a declared schema is checked in the compute pool. */
async function inputValue(run: RunState, node: TextInputNode): Promise<unknown> {
  const value = run.inputs[node.config.variable] ?? '';
  if (!node.config.schema) return value;
  return run.budget.compute('jsonValue', { value, schema: node.config.schema, what: `The input "${node.config.variable}"` }, run.signal);
}

/** An llm_call's answer: its text, or with `response_format` asking for JSON, the value parsed (and checked against the schema) in the compute pool. */
async function answerValue(run: RunState, node: LlmCallNode, content: string): Promise<unknown> {
  const format = node.config.response_format;
  if (!format || format.type === 'text') return content;
  const schema = format.type === 'json_schema' ? format.json_schema?.schema : undefined;
  return run.budget.compute('jsonValue', { text: content, what: "The model's answer", ...(schema ? { schema } : {}) }, run.signal);
}

function callModel(run: RunState, node: LlmCallNode, input: string) {
  const messages = [
    ...(node.config.system_prompt ? [{ role: 'system' as const, content: node.config.system_prompt }] : []),
    { role: 'user' as const, content: input },
  ];
  const { retry, timeout_seconds: timeoutSeconds } = node.config;
  return run.models.complete({
    model: node.config.model,
    messages,
    temperature: node.config.temperature,
    max_tokens: node.config.max_tokens,
    ...(node.config.response_format && node.config.response_format.type !== 'text' ? { response_format: node.config.response_format } : {}),
    signal: run.signal,
    onAttempt: (attempt: number) => void run.attempts.set(node.id, attempt),
    ...(run.hooks.onStepDelta ? streamed(run, node) : {}),
    ...(retry ? { retry: { maxAttempts: retry.max_attempts ?? 3, backoffMs: (retry.backoff_seconds ?? 0.25) * 1000 } } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
  });
}

/** Chunks to the run's events; a retry after some chunks voids them (node.retry), one before any needs no word. */
function streamed(run: RunState, node: WorkflowNode): Pick<ChatRequest, 'onDelta' | 'onRetry'> {
  let sent = false;
  return {
    onDelta: (text) => {
      sent = true;
      run.hooks.onStepDelta?.(node, text);
    },
    onRetry: (attempt, error) => {
      if (sent) run.hooks.onStepRetry?.(node, attempt, error);
      sent = false;
    },
  };
}

/** Logs the step's failure; an llm_call or http_request with `on_error: continue` goes on (continuedOutput), any other stops the run. */
async function stepFailed(run: RunState, node: WorkflowNode, step: StepProgress, err: unknown): Promise<Produced> {
  const failure = toFailure(err, node, run.signal);
  if (!step.started) await run.hooks.onStepStart?.(node, step.input); // a template that did not render: logged as the node's failure
  await run.hooks.onStepEnd?.({
    nodeId: node.id,
    nodeType: node.type,
    status: failure.code === 'cancelled' || failure.code === 'timeout' ? 'cancelled' : 'failed',
    input: step.input,
    output: null,
    usage: step.usage,
    error: failure,
    attempts: run.attempts.get(node.id) ?? null,
  });
  // on_error: continue — never for a cancel or the run's own timeout, which stop everything.
  if ((node.type === 'llm_call' || node.type === 'http_request') && node.config.on_error === 'continue' && !run.signal.aborted && failure.code !== 'cancelled') {
    const out = continuedOutput(node, run.edgesIn, failure);
    run.scope.nodes[node.id] = { output: out.value };
    return out;
  }
  throw failure;
}

/**
 * The text a node works on: a text_input's run input; a template's rendering; an llm_call's
 * prompt (rendered, or without one its upstream texts joined by a blank line in edge order); a
 * condition's comparison; a text_output's upstream texts.
 */
async function inputOf(
  node: WorkflowNode,
  before: Produced[],
  inputs: Record<string, unknown>,
  render: (source: string) => Promise<string>,
  verdicts: Map<string, string>,
  composite: CompositeContext,
): Promise<string> {
  switch (node.type) {
    case 'text_input':
      return produced(inputs[node.config.variable] ?? '').text;
    case 'template':
      return render(node.config.template);
    case 'condition': {
      // Rendered once: logged as what was compared, and the verdict kept for the node's text.
      const left = await render(node.config.left);
      const right = node.config.right === undefined ? '' : await render(node.config.right);
      verdicts.set(node.id, String(compare(node.config.operator, left, right)));
      return node.config.right === undefined ? `${JSON.stringify(left)} ${node.config.operator}` : `${JSON.stringify(left)} ${node.config.operator} ${JSON.stringify(right)}`;
    }
    case 'llm_call':
      return node.config.prompt === undefined ? before.map((p) => p.text).join('\n\n') : render(node.config.prompt);
    case 'split':
      return splitSource(node, before.map((p) => p.text).join('\n\n'), render);
    case 'workflow':
      return prepareCall(composite, node, before);
    default:
      return before.map((p) => p.text).join('\n\n');
  }
}

/** Without a budget of the caller's (no run, no user): the configured defaults, as an anonymous owner, steps not paced. */
let fallbackBudget: RunBudget | undefined;
const defaultBudget = () => (fallbackBudget ??= runBudget(loadConfig({ USER_STEPS_PER_SECOND: '0' }), 'anonymous'));
