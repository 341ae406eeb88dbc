// What a gateway request carries for tools (OpenAI's wire format), checked beyond what the schema
// can say, and handed to the provider as it came.
import type { components } from '../../generated/api.d.ts';
import { invalidMessage, toolTooLarge } from '../shared/errors.ts';
import type { ChatMessage, ChatRequest } from '../runs/providers/index.ts';

type ChatCompletionRequest = components['schemas']['ChatCompletionRequest'];

/**
 * Each tool's definition as JSON, at most: a JSON Schema of a few dozen arguments fits many times
 * over, and 128 tools of this size (openapi.yaml caps their number as OpenAI does) stay within the
 * body limit instead of being sent to the provider on every call.
 */
export const TOOL_MAX_CHARS = 16_384;

/** The messages, checked for what each role needs (the schema leaves `content` optional for an assistant's tool calls). */
export function messagesOf(body: ChatCompletionRequest): ChatMessage[] {
  return body.messages.map((message, index) => {
    const hasText = typeof message.content === 'string';
    if (message.role === 'assistant') {
      if (!hasText && !(message.tool_calls && message.tool_calls.length > 0))
        throw invalidMessage(index, 'an assistant message needs content or tool_calls.');
    } else if (!hasText) {
      throw invalidMessage(index, `a ${message.role} message needs content (a string).`);
    }
    if (message.role === 'tool' && message.tool_call_id === undefined)
      throw invalidMessage(index, 'a tool message needs the tool_call_id of the call it answers.');
    if (message.role !== 'assistant' && message.tool_calls !== undefined)
      throw invalidMessage(index, 'only an assistant message carries tool_calls.');
    return message as ChatMessage;
  });
}

/** `tools`, `tool_choice`, `parallel_tool_calls` and `response_format` for the provider, as the caller sent them. */
export function toolOptionsOf(
  body: ChatCompletionRequest,
): Pick<ChatRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls' | 'response_format'> {
  body.tools?.forEach((tool, index) => {
    const size = JSON.stringify(tool).length;
    if (size > TOOL_MAX_CHARS) throw toolTooLarge(index, size, TOOL_MAX_CHARS);
  });
  return {
    ...(body.tools !== undefined ? { tools: body.tools } : {}),
    ...(body.tool_choice !== undefined ? { tool_choice: body.tool_choice } : {}),
    ...(body.parallel_tool_calls !== undefined ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(body.response_format !== undefined ? { response_format: body.response_format } : {}),
  };
}
