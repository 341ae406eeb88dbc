import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startEventStream, writeFrame } from './sseStream.ts';

// Through a real server and client. That a slow reader holds the source back is proven end to end
// in serverless/streaming.test.ts (a paused socket and a provider that never stops).

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose one answer is handed to the test, and the client's view of it. */
async function openStream(): Promise<{ res: ServerResponse; answer: IncomingMessage; leave: () => void }> {
  let handed: (res: ServerResponse) => void = () => {};
  const served = new Promise<ServerResponse>((resolve) => (handed = resolve));
  server = createServer((_req, res) => {
    startEventStream(res);
    res.flushHeaders();
    handed(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const call = get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const answer = await new Promise<IncomingMessage>((resolve) => call.on('response', resolve));
  return { res: await served, answer, leave: () => call.destroy() };
}

describe('server-sent event frames', () => {
  it('answers with the event stream headers', async () => {
    const { answer } = await openStream();
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
  });

  it('writes nothing once the reader left, and has nothing to wait for', async () => {
    const { res, leave } = await openStream();
    const closed = new Promise((resolve) => res.once('close', resolve));
    leave();
    await closed;
    expect(writeFrame(res, 'data: late\n\n')).toBeUndefined();
  });
});
