import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../../test/support/fakeOpenAI.ts';
import { ProviderError } from './index.ts';
import { openAICompatibleProvider } from './openaiCompatible.ts';

// The provider client and OpenAI's tool calls and error answers: what it sends, what it reads back.

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const provider = () => openAICompatibleProvider({ baseUrl: fake.baseUrl, models: ['*'], backoffMs: 1 });
const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
const calls = [
  { id: 'call_a', name: 'lookup', arguments: '{"q":"one two three"}' },
  { id: 'call_b', name: 'other', arguments: '{}' },
];
const expected = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
const ask = { model: 'llama-3', messages: [{ role: 'user' as const, content: 'look it up' }] };

describe('tool calls through the OpenAI-compatible provider', () => {
  it('sends tools, tool_choice and parallel_tool_calls, and reads a whole answer’s calls (content null read as "")', async () => {
    fake.replies = [{ kind: 'tool-calls', calls }];
    const result = await provider().complete({ ...ask, tools, tool_choice: 'required', parallel_tool_calls: false });
    expect(fake.requests.at(-1)).toMatchObject({ tools, tool_choice: 'required', parallel_tool_calls: false });
    expect(result).toMatchObject({ content: '', finishReason: 'tool_calls', toolCalls: expected });
  });

  it('puts a stream’s tool-call pieces back together by index', async () => {
    fake.replies = [{ kind: 'tool-calls', calls }];
    const deltas: string[] = [];
    const pieces: unknown[] = [];
    const result = await provider().complete({
      ...ask,
      tools,
      onDelta: (t) => void deltas.push(t),
      onToolCallDelta: (p) => void pieces.push(...p),
    });
    expect(result).toMatchObject({ content: '', finishReason: 'tool_calls', toolCalls: expected });
    expect(deltas).toEqual([]);
    expect(pieces.slice(0, 2)).toEqual([
      { index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } },
      { index: 0, function: { arguments: '{"q":' } },
    ]);
  });

  it('refuses malformed tool calls as provider_bad_response, unretried', async () => {
    const asked = fake.requests.length;
    fake.replies = [
      {
        kind: 'raw',
        status: 200,
        body: JSON.stringify({
          choices: [{ message: { content: null, tool_calls: 'lookup' }, finish_reason: 'tool_calls' }],
        }),
      },
    ];
    const error = await provider()
      .complete(ask)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('provider_bad_response');
    expect(fake.requests.length - asked).toBe(1);
  });

  it('keeps an error answer’s status, code, type and x-request-id', async () => {
    fake.replies = [
      {
        kind: 'error',
        status: 400,
        message: 'no',
        type: 'invalid_request_error',
        code: 'bad_tools',
        requestId: 'req_1',
      },
    ];
    const error = (await provider()
      .complete(ask)
      .catch((e: unknown) => e)) as ProviderError;
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ code: 'bad_tools', type: 'invalid_request_error', requestId: 'req_1' });
  });
});
