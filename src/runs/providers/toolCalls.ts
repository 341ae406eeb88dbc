// Tool calls and error answers in OpenAI's wire format, as a provider sends them: read back into
// what the gateway passes on and what a failed step keeps.
import { ProviderError, type ProviderErrorDetails, type ToolCall, type ToolCallDelta } from './types.ts';

/** An error answer's `error` object (OpenAI's: message, type, param, code). */
export interface ProviderErrorBody {
  message?: string;
  type?: string | null;
  code?: string | number | null;
}

/** One piece of a streamed tool call (`delta.tool_calls[]`): the first of an index names it, the rest add arguments. */
export interface ToolCallPiece {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

// Far above what a model asks for in one answer (OpenAI allows 128 tools); a provider sending more is not answering sanely.
const MAX_CALLS = 1024;

const badCalls = () =>
  new ProviderError('The model provider answered with malformed tool calls.', undefined, 'provider_bad_response');

/** A stream's tool-call pieces put together by index, or a whole answer's calls, checked for their shape. */
export class ToolCallPieces {
  private readonly calls = new Map<number, ToolCall>();

  /** Adds a chunk's pieces; answers them as they may be passed on (unknown fields left out). */
  add(pieces: ToolCallPiece[] | undefined): ToolCallDelta[] {
    if (pieces === undefined || pieces === null) return [];
    if (!Array.isArray(pieces)) throw badCalls();
    return pieces.map((piece) => {
      const index = piece?.index ?? 0;
      if (!Number.isInteger(index) || index < 0 || index >= MAX_CALLS) throw badCalls();
      const call = this.calls.get(index) ?? { id: '', type: 'function', function: { name: '', arguments: '' } };
      const delta: ToolCallDelta = { index };
      const fn: NonNullable<ToolCallDelta['function']> = {};
      if (typeof piece.id === 'string') call.id = delta.id = piece.id;
      if (typeof piece.type === 'string') call.type = delta.type = piece.type;
      if (typeof piece.function?.name === 'string') call.function.name += fn.name = piece.function.name;
      if (typeof piece.function?.arguments === 'string')
        call.function.arguments += fn.arguments = piece.function.arguments;
      this.calls.set(index, call);
      return fn.name !== undefined || fn.arguments !== undefined ? { ...delta, function: fn } : delta;
    });
  }

  /** A whole message's `tool_calls`: each call is one piece at its own index. */
  addWhole(calls: unknown): void {
    if (calls === undefined || calls === null) return;
    if (!Array.isArray(calls)) throw badCalls();
    this.add(calls.map((call: ToolCallPiece, index) => ({ ...call, index })));
  }

  result(): { toolCalls?: ToolCall[] } {
    if (this.calls.size === 0) return {};
    const toolCalls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    if (toolCalls.some((call) => call.function.name === '')) throw badCalls();
    return { toolCalls };
  }
}

/** The provider's request id (OpenAI's `x-request-id`), when it sent one. */
export function requestIdOf(response: Response): { requestId?: string } {
  const id = response.headers.get('x-request-id');
  return id ? { requestId: id.slice(0, 200) } : {};
}

const short = (value: unknown) => (typeof value === 'string' ? value.slice(0, 200) : null);

/** What an error answer (or a streamed error event) says of itself: its code, its type, the request's id. */
export function detailsOf(response: Response, error: ProviderErrorBody | undefined): ProviderErrorDetails {
  const code = typeof error?.code === 'number' ? String(error.code) : short(error?.code);
  return { code, type: short(error?.type), ...requestIdOf(response) };
}

/** A provider's error answer: its status, its message, and its own code, type and request id kept. */
export function providerErrorOf(response: Response, error: ProviderErrorBody | undefined): ProviderError {
  return new ProviderError(
    `The model provider answered ${response.status}: ${error?.message ?? response.statusText}`,
    response.status,
    undefined,
    response.headers.get('retry-after'),
    detailsOf(response, error),
  );
}
