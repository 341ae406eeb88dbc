import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake answers to one request: a completion, an OpenAI error, or silence (hang). */
export type FakeReply =
  /** `until`: answers only once it settles (a step held running until the test has seen it so, however slow the machine). */
  | { kind: 'completion'; content: string; delayMs?: number; until?: Promise<unknown>; cachedTokens?: number }
  /** A streamed answer that reports its usage (these tokens) and then streams an error event: an attempt that failed after it was paid for. */
  | {
      kind: 'stream-error';
      chunks: string[];
      usage: { prompt_tokens: number; completion_tokens: number };
      message: string;
    }
  /** A streamed answer that stops after these chunks, without finish_reason or `[DONE]` (a dropped connection). */
  | { kind: 'cut-stream'; chunks: string[] }
  /** A streamed answer that sends these chunks and then nothing, never ending (a provider that stalls mid-answer). */
  | { kind: 'stalled-stream'; chunks: string[] }
  | {
      kind: 'error';
      status: number;
      message: string;
      type?: string;
      code?: string;
      requestId?: string;
      retryAfter?: number;
    }
  /** The model asks for these tools (OpenAI's `tool_calls`, `finish_reason: tool_calls`; content null unless given), streamed when asked. */
  | { kind: 'tool-calls'; calls: { id: string; name: string; arguments: string }[]; content?: string }
  | { kind: 'hang' }
  /**
   * A streamed answer that never ends: this piece again and again, each write waiting for 'drain'
   * when the socket is behind, until the caller leaves. `sent` counts the bytes written so far.
   */
  | { kind: 'endless-stream'; piece: string; sent: { bytes: number; callerLeft: boolean } }
  /** An answer that is not a completion: this status and body as they are. */
  | { kind: 'raw'; status: number; body: string };

export interface FakeOpenAI {
  baseUrl: string;
  /** Bodies of the requests received, in order. */
  requests: {
    model: string;
    /** `content` is null in an assistant message that carries `tool_calls` only (typed as most tests read it). */
    messages: { role: string; content: string; tool_call_id?: string; tool_calls?: unknown[] }[];
    temperature?: number;
    tools?: { type: string; function: { name: string; parameters?: unknown } }[];
    tool_choice?: unknown;
    parallel_tool_calls?: boolean;
    response_format?: unknown;
    max_tokens?: number;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
  }[];
  /** False: answers `stream: true` with one JSON completion, as providers without streaming do (default true). */
  streams: boolean;
  /** Replies to serve in order; when empty, `answer`'s, else an upper-cased echo. */
  replies: FakeReply[];
  /** What to answer a request by its content (concurrent requests, as a map's items make, come in any order). */
  answer?: (request: FakeOpenAI['requests'][number]) => FakeReply;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A local server speaking the OpenAI chat completions wire format (including its error bodies),
 * standing in for a model provider: the one thing in these tests the outside world owns.
 */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const fake = { requests: [], replies: [], streams: true } as unknown as FakeOpenAI;
  let created = 1_795_000_000;
  const chunk = (model: string, delta: Record<string, unknown>, finishReason: string | null) => ({
    id: `chatcmpl-fake${created}`,
    object: 'chat.completion.chunk',
    created: created++,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
  /** OpenAI's answer with tool calls: whole, or streamed as a role chunk, each call's name then its arguments in pieces, the finish. */
  const sendToolCalls = (
    res: ServerResponse,
    body: FakeOpenAI['requests'][number],
    reply: Extract<FakeReply, { kind: 'tool-calls' }>,
    promptTokens: number,
  ) => {
    const usage = { prompt_tokens: promptTokens, completion_tokens: 7, total_tokens: promptTokens + 7 };
    const calls = reply.calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    if (body.stream && fake.streams) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
      const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      send(chunk(body.model, { role: 'assistant', content: reply.content ?? null }, null));
      calls.forEach((call, index) => {
        const head = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } };
        send(chunk(body.model, { tool_calls: [head] }, null));
        for (const piece of call.function.arguments.match(/.{1,5}/gs) ?? [])
          send(chunk(body.model, { tool_calls: [{ index, function: { arguments: piece } }] }, null));
      });
      send(chunk(body.model, {}, 'tool_calls'));
      if (body.stream_options?.include_usage) send({ ...chunk(body.model, {}, null), choices: [], usage });
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const message = { role: 'assistant', content: reply.content ?? null, tool_calls: calls, refusal: null };
    res.end(
      JSON.stringify({
        id: `chatcmpl-fake${created}`,
        object: 'chat.completion',
        created: created++,
        model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }],
        usage,
      }),
    );
  };
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: 'Not found', type: 'invalid_request_error', param: null, code: null } }),
      );
      return;
    }
    const body = (await readJson(req)) as FakeOpenAI['requests'][number];
    fake.requests.push(body);
    const last = body.messages.at(-1)?.content ?? '';
    const reply: FakeReply = fake.replies.shift() ??
      fake.answer?.(body) ?? { kind: 'completion', content: last.toUpperCase() };
    if (reply.kind === 'hang') return; // never answers; the client's timeout or abort must end it
    if (reply.kind === 'raw') {
      res.writeHead(reply.status, { 'Content-Type': 'application/json' });
      res.end(reply.body);
      return;
    }
    if (reply.kind === 'error') {
      res.writeHead(reply.status, {
        'Content-Type': 'application/json',
        ...(reply.retryAfter !== undefined ? { 'Retry-After': String(reply.retryAfter) } : {}),
        ...(reply.requestId !== undefined ? { 'x-request-id': reply.requestId } : {}),
      });
      res.end(
        JSON.stringify({
          error: { message: reply.message, type: reply.type ?? 'server_error', param: null, code: reply.code ?? null },
        }),
      );
      return;
    }
    const promptTokens = body.messages.reduce(
      (n, m) => n + ((m.content as string | null) ?? '').split(/\s+/).length,
      0,
    );
    if (reply.kind === 'tool-calls') {
      sendToolCalls(res, body, reply, promptTokens);
      return;
    }
    if (reply.kind === 'endless-stream') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.on('close', () => (reply.sent.callerLeft = true));
      const frame = `data: ${JSON.stringify(chunk(body.model, { content: reply.piece }, null))}\n\n`;
      while (!res.destroyed) {
        reply.sent.bytes += frame.length;
        if (res.write(frame)) continue;
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done).off('close', done);
            resolve();
          };
          res.on('drain', done).on('close', done);
        });
      }
      return;
    }
    if (reply.kind === 'cut-stream' || reply.kind === 'stalled-stream') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      for (const piece of reply.chunks)
        res.write(`data: ${JSON.stringify(chunk(body.model, { content: piece }, null))}\n\n`);
      if (reply.kind === 'cut-stream') res.end();
      return;
    }
    if (reply.kind === 'stream-error') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      for (const piece of reply.chunks) send(chunk(body.model, { content: piece }, null));
      const { prompt_tokens: p, completion_tokens: c } = reply.usage;
      send({ ...chunk(body.model, {}, null), choices: [], usage: { ...reply.usage, total_tokens: p + c } });
      send({ error: { message: reply.message, type: 'server_error', param: null, code: null } });
      res.end();
      return;
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.until) await reply.until;
    const completionTokens = reply.content.split(/\s+/).length;
    // OpenAI reports the prompt's tokens served from its cache in prompt_tokens_details.
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: Math.min(reply.cachedTokens ?? 0, promptTokens) },
    };
    if (body.stream && fake.streams) {
      // OpenAI's streaming wire format: a role chunk, a chunk per word, a finish chunk, the usage
      // chunk (choices empty) when stream_options.include_usage asks for it, then [DONE].
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
      const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      send(chunk(body.model, { role: 'assistant', content: '' }, null));
      for (const piece of reply.content.match(/\s*\S+\s*/g) ?? []) send(chunk(body.model, { content: piece }, null));
      send(chunk(body.model, {}, 'stop'));
      if (body.stream_options?.include_usage) send({ ...chunk(body.model, {}, null), choices: [], usage });
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-fake${created}`,
        object: 'chat.completion',
        created: created++,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' }],
        usage,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.baseUrl = `http://127.0.0.1:${port}/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** A gate for replies that keep runs in flight: `{ kind: 'completion', ..., until: held }` answers once `release()` is called. */
export function replyGate(): { held: Promise<void>; release(): void } {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  return { held, release: () => release() };
}
