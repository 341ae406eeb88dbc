import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fakeOpenAI.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createUser } from '../accounts/users.ts';

// Tools through the gateway as OpenAI's own SDK uses them: the request's tools reach the provider,
// its tool calls come back (whole and streamed), the calls' results go back as `tool` messages,
// oversized tool lists are refused in OpenAI's error shape, and a provider's error keeps its code
// and request id.

const weather: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city now.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const calls = [
  { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { id: 'call_2', name: 'get_weather', arguments: '{"city":"Lyon"}' },
];
const asCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));

describe.each(testDialects())('tools through the gateway with the openai SDK (%s)', (dialect) => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      dialect,
      env: { MODEL_PROVIDER_BASE_URL: fake.baseUrl, MODEL_PROVIDER_MODELS: 'llama-3' },
    });
    const user = await createUser(server.ctx, { login: 'tools', password: 'test-password-1' });
    const { token } = await createAccessToken(server.ctx, {
      userId: user.id,
      namespace: 'tools',
      name: 'tools',
      usageScenario: 'paid',
    });
    client = new OpenAI({ apiKey: token, baseURL: `${server.baseUrl}/serverless/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('passes tools, tool_choice, parallel_tool_calls and response_format on and answers the tool calls', async () => {
    fake.replies = [{ kind: 'tool-calls', calls }];
    const completion = await client.chat.completions.create({
      model: 'llama-3',
      messages: [{ role: 'user', content: 'Weather in Paris and Lyon?' }],
      tools: [weather],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      response_format: { type: 'text' },
    });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]!.message.tool_calls).toEqual(asCalls);
    expect(completion.choices[0]!.message.content).toBe('');
    expect(fake.requests.at(-1)).toMatchObject({
      tools: [weather],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      response_format: { type: 'text' },
    });
  });

  it('takes the calls and their results back as assistant and tool messages', async () => {
    fake.replies = [{ kind: 'completion', content: 'Sunny in both.' }];
    const completion = await client.chat.completions.create({
      model: 'llama-3',
      messages: [
        { role: 'user', content: 'Weather in Paris and Lyon?' },
        { role: 'assistant', content: null, tool_calls: asCalls as OpenAI.Chat.ChatCompletionMessageToolCall[] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
      ],
      tools: [weather],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(completion.choices[0]!.message.content).toBe('Sunny in both.');
    const sent = fake.requests.at(-1)!;
    expect(sent.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: asCalls });
    expect(sent.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
    ]);
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
  });

  it.each([true, false])(
    'streams the tool calls as delta pieces the SDK puts back together (provider streams: %s)',
    async (streams) => {
      fake.streams = streams;
      fake.replies = [{ kind: 'tool-calls', calls }];
      const stream = await client.chat.completions.create({
        model: 'llama-3',
        messages: [{ role: 'user', content: 'Weather in Paris and Lyon?' }],
        tools: [weather],
        stream: true,
      });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const pieces = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      expect(pieces.filter((p) => p.id).map((p) => [p.index, p.id, p.function?.name])).toEqual([
        [0, 'call_1', 'get_weather'],
        [1, 'call_2', 'get_weather'],
      ]);
      const args = [0, 1].map((i) =>
        pieces
          .filter((p) => p.index === i)
          .map((p) => p.function?.arguments ?? '')
          .join(''),
      );
      expect(args).toEqual([calls[0]!.arguments, calls[1]!.arguments]);
      // Passed on as the provider streams them (its arguments in 5-character pieces), else each call's name then arguments.
      expect(pieces.length).toBe(streams ? 2 + 4 + 3 : 4);
      expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');

      // The SDK's own accumulator reads the same stream into a whole message.
      fake.replies = [{ kind: 'tool-calls', calls }];
      const runner = client.chat.completions.stream({
        model: 'llama-3',
        messages: [{ role: 'user', content: 'Weather in Paris and Lyon?' }],
        tools: [weather],
      });
      const final = await runner.finalChatCompletion();
      fake.streams = true;
      expect(final.choices[0]!.message.tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual(
        calls.map((c) => [c.id, c.name, c.arguments]),
      );
    },
  );

  it('refuses more than 128 tools, an oversized tool and a tool message without its call id', async () => {
    const many = Array.from({ length: 129 }, (_, i) => ({
      ...weather,
      function: { ...weather.function, name: `t${i}` },
    }));
    const refusals = [
      { tools: many, messages: [{ role: 'user' as const, content: 'hi' }] },
      {
        tools: [
          {
            ...weather,
            function: { ...weather.function, description: 'x'.repeat(4000), parameters: { big: 'y'.repeat(13_000) } },
          },
        ],
        messages: [{ role: 'user' as const, content: 'hi' }],
      },
      { messages: [{ role: 'tool', content: 'sunny' } as OpenAI.Chat.ChatCompletionMessageParam] },
    ];
    const asked = fake.requests.length;
    const errors = await Promise.all(
      refusals.map((body) =>
        client.chat.completions.create({ model: 'llama-3', ...body }).catch((e: unknown) => e as APIError),
      ),
    );
    expect(errors.every((e) => e instanceof OpenAI.BadRequestError && e.type === 'invalid_request_error')).toBe(true);
    expect(errors.map((e) => (e as APIError).param)).toEqual(['tools', 'tools', 'messages']);
    expect((errors[1] as APIError).code).toBe('invalid_value');
    expect((errors[1] as APIError).message).toContain('at most 16384');
    expect((errors[2] as APIError).message).toContain('tool_call_id');
    expect(fake.requests.length).toBe(asked);
  });

  it("keeps a provider's error code and request id in the 502", async () => {
    fake.replies = [
      {
        kind: 'error',
        status: 400,
        message: 'bad schema',
        type: 'invalid_request_error',
        code: 'invalid_tools',
        requestId: 'req_abc123',
      },
    ];
    const error = (await client.chat.completions
      .create({ model: 'llama-3', messages: [{ role: 'user', content: 'hi' }], tools: [weather] })
      .catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain('it answered 400, code invalid_tools, request id req_abc123');
  });
});
