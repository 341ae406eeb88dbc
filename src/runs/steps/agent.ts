// An agent node: the model called with the node's tools until it answers without tool calls
// (openapi.yaml AgentNode). Each model call and each tool call spends the run's budgets as other
// nodes' do; the conversation is bounded by NODE_TEXT_MAX_CHARS and each tool result is cut.
import { RunFailure } from '../../shared/errors.ts';
import { FunctionError } from '../compute/functionError.ts';
import { toFailure } from '../failures.ts';
import { callTool, readyTools, TOOL_CALLS_AT_ONCE, wireTools, type ReadyTool } from '../nodes/agentTools.ts';
import {
  addedUsage,
  ProviderError,
  type ChatMessage,
  type ChatResult,
  type ToolCall,
  type Usage,
} from '../providers/index.ts';
import type { NodeOf, NodeStep, RunState } from '../runState.ts';

type AgentNode = NodeOf<'agent'>;

const DEFAULT_MAX_ITERATIONS = 10;

/** OpenAI's `tool_choice`: a mode as it is, a tool's name as the function it forces. */
const wireChoice = (choice: string): unknown =>
  choice === 'auto' || choice === 'required' || choice === 'none'
    ? choice
    : { type: 'function', function: { name: choice } };

function callModel(
  run: RunState,
  node: AgentNode,
  messages: ChatMessage[],
  tools: ReadonlyMap<string, ReadyTool>,
  first: boolean,
): Promise<ChatResult> {
  const { config } = node;
  // A forced choice (required, or one tool) holds for the first call only, as OpenAI's agents
  // do: forcing every call would never let the model answer.
  const choice = config.tool_choice && (first || config.tool_choice === 'none') ? config.tool_choice : undefined;
  const { retry, timeout_seconds: timeoutSeconds } = config;
  return run.models.complete({
    model: config.model,
    messages,
    tools: wireTools(tools),
    ...(choice ? { tool_choice: wireChoice(choice) } : {}),
    ...(config.parallel_tool_calls !== undefined ? { parallel_tool_calls: config.parallel_tool_calls } : {}),
    temperature: config.temperature,
    max_tokens: config.max_tokens,
    ...(config.response_format && config.response_format.type !== 'text'
      ? { response_format: config.response_format }
      : {}),
    signal: run.signal,
    onAttempt: () => void run.attempts.set(node.id, (run.attempts.get(node.id) ?? 0) + 1),
    onRetry: (attempt, error, delayMs) =>
      run.hooks.onStepRetry?.(node, attempt, { code: error.kind, message: error.message }, delayMs),
    ...(retry
      ? { retry: { maxAttempts: retry.max_attempts ?? 3, backoffMs: (retry.backoff_seconds ?? 0.25) * 1000 } }
      : {}),
    ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
  });
}

/** The final answer: its text, or with `response_format` asking for JSON, the value parsed and checked in the compute pool. */
async function answerValue(run: RunState, node: AgentNode, content: string): Promise<unknown> {
  const format = node.config.response_format;
  if (!format || format.type === 'text') return content;
  const schema = format.type === 'json_schema' ? format.json_schema?.schema : undefined;
  const input = { text: content, what: "The model's answer", ...(schema ? { schema } : {}) };
  try {
    return await run.budget.compute('jsonValue', input, run.signal);
  } catch (err) {
    // As an llm_call's: the answer that broke the format is kept on the failed step.
    if (!(err instanceof FunctionError)) throw err;
    const failure = toFailure(err, node, run.signal);
    failure.rawOutput = content;
    throw failure;
  }
}

/** The calls of one answer, each as its `role: tool` message, in the order asked; together at most TOOL_CALLS_AT_ONCE when parallel. */
async function toolMessages(
  run: RunState,
  node: AgentNode,
  tools: ReadonlyMap<string, ReadyTool>,
  calls: ToolCall[],
  first: number,
): Promise<ChatMessage[]> {
  const answers = new Array<string>(calls.length);
  const width = node.config.parallel_tool_calls === false ? 1 : TOOL_CALLS_AT_ONCE;
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const i = next++;
      answers[i] = await callTool(run, node, tools, calls[i]!, first + i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, calls.length) }, worker));
  return calls.map((call, i) => ({ role: 'tool', tool_call_id: call.id, content: answers[i]! }));
}

/** The conversation past NODE_TEXT_MAX_CHARS fails the node: it would be sent again with every call. */
function assertBounded(run: RunState, node: AgentNode, messages: ChatMessage[]): void {
  const size = JSON.stringify(messages).length;
  if (size > run.budget.nodeTextMaxChars)
    throw new RunFailure(
      'output_too_large',
      `The agent's conversation grew to ${size} characters, past ${run.budget.nodeTextMaxChars} (NODE_TEXT_MAX_CHARS).`,
      node.id,
    );
}

async function agentLoop(run: RunState, node: AgentNode, input: string, usage: { total: Usage }) {
  const tools = await readyTools(run, node);
  const messages: ChatMessage[] = [
    ...(node.config.system_prompt
      ? [{ role: 'system' as const, content: await run.render(node.config.system_prompt) }]
      : []),
    { role: 'user', content: input },
  ];
  const requested = node.config.max_iterations ?? DEFAULT_MAX_ITERATIONS;
  const iterations = run.budget.caps?.agentIterations(requested) ?? requested;
  let calls = 0;
  for (let i = 0; i < iterations; i++) {
    const result = await callModel(run, node, messages, tools, i === 0);
    usage.total = addedUsage(usage.total, result.usage);
    const asked = result.toolCalls ?? [];
    if (asked.length === 0) return answerValue(run, node, result.content);
    messages.push({ role: 'assistant', content: result.content === '' ? null : result.content, tool_calls: asked });
    messages.push(...(await toolMessages(run, node, tools, asked, calls)));
    calls += asked.length;
    assertBounded(run, node, messages);
  }
  throw new RunFailure(
    'agent_max_iterations',
    `The model still asked for tools after ${iterations} model calls (max_iterations ${requested}${iterations < requested ? `, AGENT_MAX_ITERATIONS_CAP ${iterations}` : ''}); ${calls} tool calls ran.`,
    node.id,
  );
}

export const agentStep: NodeStep<AgentNode> = {
  // Its prompt rendered, or without one its upstream texts joined by a blank line in edge order.
  input: (run, node, before) =>
    node.config.prompt === undefined ? before.map((p) => p.text).join('\n\n') : run.render(node.config.prompt),
  async work(run, node, input) {
    const usage = { total: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } };
    try {
      return { value: await agentLoop(run, node, input, usage), usage: usage.total };
    } catch (err) {
      // Every model call was paid for, whatever failed after it: the failed step counts them all.
      const failure = toFailure(err, node, run.signal);
      // A provider call that failed after its answer reported tokens counts them too.
      const failed = err instanceof ProviderError ? err.usage : undefined;
      failure.usage = failed ? addedUsage(usage.total, failed) : usage.total;
      throw failure;
    }
  },
  // Going on past its failure with neither a default nor an error edge, its failure is all it leaves.
  failureIsFinal: (node) => node.config.on_error === 'continue' && node.config.default == null,
};
