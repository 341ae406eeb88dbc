// An agent node's tools at run time (openapi.yaml AgentTool): each offered to the model in
// OpenAI's wire format, and each call the model makes run as a logged step of the run named
// `<agent>[<n>].<tool>` (a workflow tool's nodes under it, as a called workflow's are). A call
// that cannot run (unknown tool, arguments that are not JSON or do not fit) or whose tool fails is
// answered to the model as an error, so it can correct itself; a cancel or the run's timeout is
// not an answer, it stops the node.
import { inSpan } from '../../shared/tracing.ts';
import type { components } from '../../../generated/api.d.ts';
import { runInputOf } from '../../nodes/registry.ts';
import { RunFailure } from '../../shared/errors.ts';
import { scopeFor } from '../compute/scope.ts';
import { toFailure } from '../failures.ts';
import type { ToolCall } from '../providers/index.ts';
import type { RunState, WorkflowNode } from '../runState.ts';
import { produced, toText } from '../values.ts';
import { innerFailure, outputIds, resultOf, typedInputs, type Graph } from './subgraph.ts';

type AgentNode = components['schemas']['AgentNode'];
type AgentTool = components['schemas']['AgentTool'];

/** A tool's result is cut here before it goes back to the model (the conversation is bounded). */
export const TOOL_RESULT_MAX_CHARS = 20_000;
/** Calls of one model answer run together at most this many at once (`parallel_tool_calls`). */
export const TOOL_CALLS_AT_ONCE = 4;

export interface ReadyTool {
  tool: AgentTool;
  /** Its arguments' JSON Schema, as sent to the model. */
  parameters: Record<string, unknown>;
  /** A workflow tool's graph at its pinned version. */
  graph?: Graph;
}

/** A workflow's run inputs as one object schema: each text_input's schema, all required. */
function inputsSchema(graph: Graph): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const node of graph.nodes) {
    const input = runInputOf(node);
    if (input) properties[input.variable] = input.schema;
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** Each tool by name, a workflow tool's graph read (the call stack and depth checked) once for the node. */
export async function readyTools(run: RunState, node: AgentNode): Promise<Map<string, ReadyTool>> {
  const ready = new Map<string, ReadyTool>();
  for (const tool of node.config.tools) {
    // Only a workflow tool names a workflow (the save holds each kind to its fields).
    if (tool.workflow_id !== undefined) {
      const graph = await run.composite.deps.loadWorkflow(tool.workflow_id!, tool.version);
      ready.set(tool.name, { tool, parameters: inputsSchema(graph), graph });
    } else ready.set(tool.name, { tool, parameters: tool.parameters ?? { type: 'object' } });
  }
  return ready;
}

/** The tools in OpenAI's wire format (`tools` of a chat completion request). */
export const wireTools = (tools: ReadonlyMap<string, ReadyTool>): unknown[] =>
  [...tools.values()].map(({ tool, parameters }) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters },
  }));

/** What the model is told when a call could not run or its tool failed. */
const toolError = (code: string, message: string): string => JSON.stringify({ error: { code, message } });

/** A call's arguments, parsed and checked against its tool's schema in the compute pool. */
async function argumentsOf(run: RunState, ready: ReadyTool, call: ToolCall): Promise<Record<string, unknown>> {
  const text = call.function.arguments.trim() === '' ? '{}' : call.function.arguments;
  const what = `The arguments of ${ready.tool.name}`;
  const value = await run.budget.compute('jsonValue', { text, what, schema: ready.parameters }, run.signal);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RunFailure('schema_violation', `${what} must be a JSON object.`);
  return value as Record<string, unknown>;
}

/** The node a tool call is logged as: its kind's node type, its step id, what it sends. */
function stepNode(tool: AgentTool, id: string): WorkflowNode {
  if (tool.workflow_id !== undefined)
    return { id, type: 'workflow', config: { workflow_id: tool.workflow_id!, version: tool.version } };
  const { method, url, headers, body, timeout_seconds } = tool;
  const config = { url: url!, ...{ method, headers, body, timeout_seconds } };
  return { id, type: 'http_request', config };
}

/** Runs the tool with its arguments under `signal` (the run's, and the tool's timeout). */
async function runTool(
  run: RunState,
  ready: ReadyTool,
  step: WorkflowNode,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  const { tool } = ready;
  if (ready.graph) {
    const graph = ready.graph;
    const inputs = typedInputs(graph, args);
    const output = await run.composite.deps.runGraph(graph, inputs, `${step.id}.`, signal, tool.workflow_id);
    return resultOf(output, outputIds(graph));
  }
  const render = (source: string) =>
    run.budget.compute('renderTemplate', { source, scope: { ...scopeFor(source, run.scope), args } }, signal);
  const http = step as Extract<WorkflowNode, { type: 'http_request' }>;
  await run.http.prepare(http, render);
  return run.http.send(http, signal, () => undefined);
}

/**
 * One tool call as a step `<agent>[<n>].<tool>`: its arguments in, its result out, as the text the
 * model gets back. A call an earlier attempt of the run finished is not run again: its logged
 * result is answered.
 */
export async function callTool(
  run: RunState,
  node: AgentNode,
  tools: ReadonlyMap<string, ReadyTool>,
  call: ToolCall,
  n: number,
): Promise<string> {
  const ready = tools.get(call.function.name);
  if (!ready) {
    const names = [...tools.keys()].map((name) => JSON.stringify(name)).join(', ');
    return toolError('unknown_tool', `No tool "${call.function.name.slice(0, 64)}": the tools are ${names}.`);
  }
  const id = `${node.id}[${n}].${ready.tool.name}`;
  if (run.resumed.has(id)) return cut(toText(run.resumed.get(id)));
  const step = stepNode(ready.tool, id);
  const input = call.function.arguments;
  run.budget.caps?.step();
  await run.budget.pace?.(run.signal);
  await run.hooks.onStepStart?.(step, input);
  const timeoutMs = (ready.tool.timeout_seconds ?? (ready.graph ? 0 : 30)) * 1000;
  const signal = timeoutMs > 0 ? AbortSignal.any([run.signal, AbortSignal.timeout(timeoutMs)]) : run.signal;
  try {
    // A GenAI tool span inside the agent node's: a workflow tool's nodes, an http tool's request under it.
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': ready.tool.name,
      'gen_ai.tool.type': ready.tool.kind,
      'gen_ai.tool.call.id': call.id,
      'node.id': id,
    };
    const args = await argumentsOf(run, ready, call);
    const out = produced(
      await inSpan(`execute_tool ${ready.tool.name}`, { attributes }, () => runTool(run, ready, step, args, signal)),
    );
    await run.hooks.onStepEnd?.({
      ...{ nodeId: id, nodeType: step.type, status: 'completed', input, output: out.text },
      ...{ outputIsJson: typeof out.value !== 'string', usage: null, error: null, attempts: null },
    });
    return cut(out.text);
  } catch (err) {
    const failure = toolFailure(err, step, run.signal, signal);
    const stopped = failure.code === 'cancelled' || failure.code === 'timeout';
    await run.hooks.onStepEnd?.({
      ...{ nodeId: id, nodeType: step.type, status: stopped ? 'cancelled' : 'failed', input, output: null },
      ...{ usage: null, error: failure, attempts: null },
    });
    if (stopped) throw failure;
    return toolError(failure.code, failure.message);
  }
}

/** Why a tool call failed: the run's own stop stays a stop; the tool's timeout is the tool's failure. */
function toolFailure(err: unknown, step: WorkflowNode, runSignal: AbortSignal, signal: AbortSignal): RunFailure {
  if (!runSignal.aborted && signal.aborted)
    return new RunFailure('tool_timeout', 'The tool took longer than its timeout_seconds.', step.id);
  // A workflow tool's failure names its inner step: it is this step's failure, not another node's.
  return toFailure(innerFailure(err, 'The tool', `${step.id}.`), step, runSignal);
}

const cut = (text: string): string =>
  text.length <= TOOL_RESULT_MAX_CHARS
    ? text
    : `${text.slice(0, TOOL_RESULT_MAX_CHARS)}… [cut at ${TOOL_RESULT_MAX_CHARS} characters]`;
