// The client's stream helpers against a server that misbehaves as networks do: the SSE reader
// (WHATWG HTML 9.2.6) on split chunks, CRLF, comments and multi-line data; followRunEvents resuming
// with Last-Event-ID after a dropped connection, skipping event names it does not know (the
// contract's open enum); streamChatCompletion failing loudly on a stream cut before [DONE].
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createApiClient,
  followRunEvents,
  readServerSentEvents,
  streamChatCompletion,
  StreamError,
} from '../../client/src/index.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server whose n-th request (from 0) is answered by `answer(n, headers, res)`. */
async function serve(answer: (n: number, headers: IncomingHttpHeaders, res: ServerResponse) => void): Promise<string> {
  let n = 0;
  server = createServer((req, res) => answer(n++, req.headers, res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

const sse = (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/event-stream' });
const event = (id: number, name: string, data: unknown) =>
  `id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

describe('readServerSentEvents', () => {
  it('joins data lines, keeps the last id, skips comments, reads CRLF and chunks split anywhere', async () => {
    const text = ': keepalive\r\nid: 7\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\ndata: {"x":1}\n\nid\n\n';
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 3) controller.enqueue(bytes.slice(i, i + 3));
        controller.close();
      },
    });
    const events = [];
    for await (const e of readServerSentEvents(body)) events.push(e);
    expect(events).toEqual([
      { id: '7', event: 'a', data: 'one\ntwo' },
      { id: '7', event: 'message', data: '{"x":1}' },
    ]);
  });
});

describe('followRunEvents', () => {
  it('resumes with Last-Event-ID after the connection drops, none lost or repeated, and skips events it does not know', async () => {
    const lastIds: (string | undefined)[] = [];
    const base = await serve((n, headers, res) => {
      lastIds.push(headers['last-event-id'] as string | undefined);
      sse(res);
      if (n === 0) {
        res.write(event(1, 'run.status', { status: 'running' }) + event(2, 'node.paused', { node_id: 'a' }));
        setTimeout(() => res.destroy(), 50); // the connection drops before run.finished
      } else
        res.end(
          event(3, 'node.delta', { node_id: 'a', text: 'hi' }) +
            event(4, 'run.finished', { id: 'run_1', status: 'completed' }),
        );
    });
    const api = createApiClient(base, { bearer: 'sk_x' });
    const seen: string[] = [];
    const { data } = await followRunEvents(api, { workflowId: 'wf_1', runId: 'run_1' });
    for await (const e of data!) seen.push(`${e.id} ${e.event}`);
    expect(seen).toEqual(['1 run.status', '3 node.delta', '4 run.finished']);
    expect(lastIds).toEqual([undefined, '2']);
  });

  it('gives up with a StreamError after maxReconnects drops without an event', async () => {
    let requests = 0;
    const base = await serve((n, _headers, res) => {
      requests++;
      if (n > 0) return void res.destroy(); // reconnections fail at the network
      sse(res);
      res.write(': hello\n\n');
      setTimeout(() => res.destroy(), 50);
    });
    const { data } = await followRunEvents(
      createApiClient(base),
      { workflowId: 'wf_1', runId: 'run_1' },
      { maxReconnects: 2 },
    );
    await expect(
      (async () => {
        for await (const _e of data!) void _e;
      })(),
    ).rejects.toThrow(StreamError);
    expect(requests).toBe(3);
  });
});

describe('streamChatCompletion', () => {
  it('throws a StreamError for an error event after the first chunk, and for a stream cut before [DONE]', async () => {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }],
    };
    const base = await serve((n, _headers, res) => {
      sse(res);
      res.end(
        `data: ${JSON.stringify(chunk)}\n\n` +
          (n === 0
            ? `data: ${JSON.stringify({ error: { message: 'provider went away', type: 'upstream_error' } })}\n\n`
            : ''),
      );
    });
    const api = createApiClient(base);
    for (const expected of ['provider went away', 'The stream ended before [DONE].']) {
      const { data } = await streamChatCompletion(api, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
      const texts: string[] = [];
      await expect(
        (async () => {
          for await (const c of data!) texts.push(c.choices[0]?.delta.content ?? '');
        })(),
      ).rejects.toThrow(expected);
      expect(texts).toEqual(['a']);
    }
  });
});

describe('createApiClient: idempotent starts', () => {
  it("sends a random Idempotency-Key on every run start (a failed start may have stored the run) and keeps the caller's own", async () => {
    const keys: (string | undefined)[] = [];
    const base = await serve((_n, headers, res) => {
      keys.push(headers['idempotency-key'] as string | undefined);
      res.writeHead(503, { 'Content-Type': 'application/problem+json', 'Retry-After': '1' }).end('{"status":503}');
    });
    const api = createApiClient(base, { bearer: 'k' });
    const start = (key?: string) =>
      api.POST('/api/workflows/{workflow_id}/run', {
        params: { path: { workflow_id: 'wf_1' }, header: key ? { 'Idempotency-Key': key } : {} },
        body: { inputs: {} },
      });
    await start();
    await start();
    await start('mine-1');
    await api.GET('/api/workflows');
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[2]).toBe('mine-1');
    expect(keys[3]).toBeUndefined();
  });
});
