import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, httpLogger } from './logger.ts';

// At a terminal (main.ts: pretty when stdout is a TTY) a request is one line, so the secrets the
// service prints once at start are not buried under a dozen lines per request; the JSON lines a
// log collector reads keep every field.

/** A terminal's colour codes. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

function capture(): { stream: Writable; lines: () => string[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    stream,
    lines: () => text.replace(ANSI, '').split('\n').filter(Boolean),
  };
}

async function requestThrough(pretty: boolean): Promise<string[]> {
  const out = capture();
  const logger = createLogger({ pretty, destination: out.stream });
  const app = express();
  app.use(httpLogger(logger));
  app.get('/hello', (_req, res) => res.send('hi'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hello?code=abc`);
    await res.text();
    await vi.waitFor(() => expect(out.lines().length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 50)); // any further line of the same request
    return out.lines();
  } finally {
    server.close();
  }
}

describe('the request log', () => {
  it('at a terminal, writes one line per request: method, path (secrets scrubbed), status and time', async () => {
    const lines = await requestThrough(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/INFO.*GET \/hello\?code=%5Bredacted%5D 200 \d+ms/);
  });

  it('for a log collector, keeps its JSON line with every field', async () => {
    const lines = await requestThrough(false);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'request completed',
      req: { method: 'GET', url: '/hello?code=%5Bredacted%5D' },
      res: { statusCode: 200 },
    });
    expect(typeof line.responseTime).toBe('number');
  });
});
