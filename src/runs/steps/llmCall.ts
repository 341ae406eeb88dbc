import { RunFailure } from '../../shared/errors.ts';
import { FunctionError } from '../compute/functionError.ts';
import { toFailure } from '../failures.ts';
import type { ChatRequest, ChatResult } from '../providers/index.ts';
import type { NodeOf, NodeStep, RunState, WorkflowNode } from '../runState.ts';

type LlmCallNode = NodeOf<'llm_call'>;

/** An llm_call's answer: its text, or with `response_format` asking for JSON, the value parsed (and checked against the schema) in the compute pool. */
async function answerValue(run: RunState, node: LlmCallNode, content: string): Promise<unknown> {
  const format = node.config.response_format;
  if (!format || format.type === 'text') return content;
  const schema = format.type === 'json_schema' ? format.json_schema?.schema : undefined;
  return run.budget.compute(
    'jsonValue',
    { text: content, what: "The model's answer", ...(schema ? { schema } : {}) },
    run.signal,
  );
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
    ...(node.config.response_format && node.config.response_format.type !== 'text'
      ? { response_format: node.config.response_format }
      : {}),
    signal: run.signal,
    onAttempt: (attempt: number) => void run.attempts.set(node.id, attempt),
    ...streamed(run, node),
    ...(retry
      ? { retry: { maxAttempts: retry.max_attempts ?? 3, backoffMs: (retry.backoff_seconds ?? 0.25) * 1000 } }
      : {}),
    ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
  });
}

/**
 * Chunks to the run's events (when it has them), and each retry as an event (node.retry): it says
 * why and when the node is tried again, and voids the chunks streamed so far.
 */
function streamed(run: RunState, node: WorkflowNode): Pick<ChatRequest, 'onDelta' | 'onRetry'> {
  const onDelta = run.hooks.onStepDelta;
  return {
    ...(onDelta ? { onDelta: (text: string) => onDelta(node, text) } : {}),
    onRetry: (attempt, error, delayMs) =>
      run.hooks.onStepRetry?.(node, attempt, { code: error.kind, message: error.message }, delayMs),
  };
}

/**
 * An llm_call takes text: a model that asked for tools instead has not answered, and its empty text
 * must not flow on as if it had. Asking again would ask the same, so it is not retried.
 */
function refuseToolCalls(node: WorkflowNode, result: ChatResult): void {
  const calls = result.toolCalls ?? [];
  if (calls.length === 0 && result.finishReason !== 'tool_calls') return;
  const names = [...new Set(calls.map((call) => call.function.name))];
  const asked = names.length > 0 ? `: ${names.map((name) => JSON.stringify(name)).join(', ')}` : '';
  throw new RunFailure(
    'unexpected_tool_calls',
    `The model answered with tool calls instead of text${asked}. An llm_call node cannot run tools.`,
    node.id,
  );
}

export const llmCallStep: NodeStep<LlmCallNode> = {
  // Its prompt rendered, or without one its upstream texts joined by a blank line in edge order.
  input: (run, node, before) =>
    node.config.prompt === undefined ? before.map((p) => p.text).join('\n\n') : run.render(node.config.prompt),
  async work(run, node, input) {
    const result = await callModel(run, node, input);
    try {
      refuseToolCalls(node, result);
      return { value: await answerValue(run, node, result.content), usage: result.usage };
    } catch (err) {
      // An answer was paid for whatever fails after it (tool calls instead of text, a cancel or the
      // run's time limit while its JSON was checked): the failed step counts its tokens. One that is
      // not JSON or breaks the schema is also what one needs to see to fix the prompt or the
      // schema: the failed step keeps it.
      const failure = toFailure(err, node, run.signal);
      if (err instanceof FunctionError) failure.rawOutput = result.content;
      failure.usage = result.usage;
      throw failure;
    }
  },
  // Going on past its failure with neither a default nor an error edge, its failure is all it leaves.
  failureIsFinal: (node) => node.config.on_error === 'continue' && node.config.default == null,
};
