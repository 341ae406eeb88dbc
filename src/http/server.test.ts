// The HTTP server's socket timeouts (server.ts createHttpServer), set on purpose: a socket that
// dribbles its headers, one that sends nothing, and an idle kept-alive one are all closed by the
// server. Real sockets against a real server; the assertions are on what the server does (a 408,
// a close), never on how long it took.
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from './server.ts';

/** Everything the server sent until it closed the socket. */
function untilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
  });
}

describe('HTTP server timeouts', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createHttpServer((_req, res) => res.end('ok'), { headersMs: 1000, requestMs: 2000, keepAliveMs: 1000 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ({ port } = server.address() as AddressInfo);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const open = () => connect(port, '127.0.0.1');

  it('answers 408 and closes a socket whose headers never end (slow headers)', async () => {
    const socket = open();
    const sent = untilClosed(socket);
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    const text = await sent;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('Connection: close');
  });

  it('closes a socket that connects and sends nothing', async () => {
    const socket = open();
    await untilClosed(socket);
    expect(socket.destroyed).toBe(true);
  });

  it('closes an idle kept-alive socket after its answer', async () => {
    const socket = open();
    const sent = untilClosed(socket);
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const text = await sent;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toMatch(/keep-alive/i);
    expect(text.endsWith('ok')).toBe(true);
  });

  it('cuts a headers timeout longer than the request timeout to it, as Node requires', () => {
    const other = createHttpServer(undefined, { headersMs: 5000, requestMs: 2000, keepAliveMs: 1000 });
    expect(other.headersTimeout).toBe(2000);
    expect(other.requestTimeout).toBe(2000);
    expect(other.keepAliveTimeout).toBe(1000);
  });
});
