import type { components } from '../../generated/api.d.ts';
import { renderTemplate, TemplateError, type TemplateScope } from '../workflows/templates.ts';
import { ModelUnavailableError, type ModelRouter, type Usage } from './providers/index.ts';

export type WorkflowNode = components['schemas']['WorkflowNode'];
export type WorkflowEdge = components['schemas']['WorkflowEdge'];
export type RunErrorBody = components['schemas']['RunError'];

export interface Graph {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

/** Why a node (and so the run) failed; `code` is what clients branch on. */
export class RunFailure extends Error {
  readonly code: string;
  readonly nodeId: string | null;
  constructor(code: string, message: string, nodeId: string | null = null) {
    super(message);
    this.code = code;
    this.nodeId = nodeId;
  }
  toJSON(): RunErrorBody {
    return { code: this.code, message: this.message, node_id: this.nodeId };
  }
}

export interface StepReport {
  nodeId: string;
  nodeType: WorkflowNode['type'];
  status: 'completed' | 'failed' | 'cancelled';
  input: string;
  output: string | null;
  usage: Usage | null;
  error: RunFailure | null;
}

export interface ExecutionHooks {
  onStepStart?(node: WorkflowNode, input: string): Promise<void> | void;
  onStepEnd?(report: StepReport): Promise<void> | void;
  /** Asked before each node starts; false stops the run as cancelled (the run's own state). */
  shouldContinue?(): Promise<boolean> | boolean;
}

export interface Execution {
  /** Keyed by `text_output` node id: the formatted text, or for `json` the parsed value. */
  output: Record<string, unknown>;
}

function formatOutput(format: 'plain' | 'markdown' | 'json', texts: string[]): unknown {
  const text = texts.join(format === 'markdown' ? '\n\n' : '\n');
  if (format !== 'json') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // not JSON: kept as a JSON string, never lost
  }
}

/**
 * Runs a validated graph: every node starts as soon as all its predecessors are done, so
 * independent branches run concurrently. The first failure aborts the rest.
 */
export async function executeGraph(
  graph: Graph,
  inputs: Record<string, string>,
  models: ModelRouter,
  options: { signal?: AbortSignal; hooks?: ExecutionHooks } = {},
): Promise<Execution> {
  const hooks = options.hooks ?? {};
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const predecessors = new Map<string, string[]>(graph.nodes.map((n) => [n.id, []]));
  for (const edge of graph.edges) predecessors.get(edge.to)?.push(edge.from);

  const texts = new Map<string, Promise<string>>();
  /** What templates see: the run's inputs and each finished node's text. */
  const scope: TemplateScope = { inputs, nodes: {} };
  const output: Record<string, unknown> = {};

  const runNode = (node: WorkflowNode): Promise<string> => {
    let pending = texts.get(node.id);
    if (pending) return pending;
    pending = (async () => {
      const before = await Promise.all((predecessors.get(node.id) ?? []).map((id) => runNode(byId.get(id)!)));
      if (signal.aborted) throw signal.reason instanceof RunFailure ? signal.reason : new RunFailure('cancelled', 'The run was cancelled.');
      if (hooks.shouldContinue && !(await hooks.shouldContinue())) {
        throw new RunFailure('cancelled', 'The run was cancelled.', node.id);
      }
      let input = '';
      let usage: Usage | null = null;
      let started = false;
      try {
        input = await inputOf(node, before, inputs, scope);
        await hooks.onStepStart?.(node, input);
        started = true;
        let text: string;
        if (node.type === 'text_input' || node.type === 'template') text = input;
        else if (node.type === 'llm_call') {
          const messages = [
            ...(node.config.system_prompt ? [{ role: 'system' as const, content: node.config.system_prompt }] : []),
            { role: 'user' as const, content: input },
          ];
          const result = await models.complete({
            model: node.config.model,
            messages,
            temperature: node.config.temperature,
            max_tokens: node.config.max_tokens,
            signal,
          });
          usage = result.usage;
          text = result.content;
        } else {
          const value = formatOutput(node.config.format, before);
          output[node.id] = value;
          text = typeof value === 'string' ? value : JSON.stringify(value);
        }
        await hooks.onStepEnd?.({ nodeId: node.id, nodeType: node.type, status: 'completed', input, output: text, usage, error: null });
        scope.nodes[node.id] = { output: text };
        return text;
      } catch (err) {
        const failure = toFailure(err, node, signal);
        if (!started) await hooks.onStepStart?.(node, input); // a template that did not render: logged as the node's failure
        await hooks.onStepEnd?.({
          nodeId: node.id,
          nodeType: node.type,
          status: failure.code === 'cancelled' || failure.code === 'timeout' ? 'cancelled' : 'failed',
          input,
          output: null,
          usage,
          error: failure,
        });
        throw failure;
      }
    })();
    texts.set(node.id, pending);
    return pending;
  };

  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  try {
    await Promise.all(graph.nodes.map(runNode));
  } catch (err) {
    controller.abort(err);
    // Let nodes already running settle so their logs are written before the run is finished.
    await Promise.allSettled(texts.values());
    throw err instanceof RunFailure ? err : new RunFailure('internal_error', (err as Error).message);
  }
  return { output };
}

/**
 * The text a node works on: a text_input's run input; a template's rendering; an llm_call's
 * prompt (rendered, or without one its upstream texts joined by a blank line in edge order); a
 * text_output's upstream texts.
 */
async function inputOf(node: WorkflowNode, before: string[], inputs: Record<string, string>, scope: TemplateScope): Promise<string> {
  switch (node.type) {
    case 'text_input':
      return inputs[node.config.variable] ?? '';
    case 'template':
      return renderTemplate(node.config.template, scope);
    case 'llm_call':
      return node.config.prompt === undefined ? before.join('\n\n') : renderTemplate(node.config.prompt, scope);
    default:
      return before.join('\n\n');
  }
}

function toFailure(err: unknown, node: WorkflowNode, signal: AbortSignal): RunFailure {
  const reason: unknown = signal.aborted ? signal.reason : err;
  if (reason instanceof RunFailure) {
    if (reason.nodeId === null) return new RunFailure(reason.code, reason.message, node.id);
    if (reason.nodeId === node.id) return reason;
    return new RunFailure('cancelled', `Stopped because node ${reason.nodeId} failed.`, node.id);
  }
  if (signal.aborted) return new RunFailure('cancelled', 'The run was cancelled.', node.id);
  if (err instanceof ModelUnavailableError) return new RunFailure('model_unavailable', err.message, node.id);
  if (err instanceof TemplateError) return new RunFailure('template_error', err.message, node.id);
  return new RunFailure('provider_error', (err as Error).message, node.id);
}
