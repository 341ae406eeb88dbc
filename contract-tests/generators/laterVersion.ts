// The service as a later minor version of the contract may answer: a proxy in front of the live
// service that gives every run step (RunStep, in a run's `logs`) a `status` and a `node_type` no
// released contract lists. Both are open enums (`x-extensible-enum`), so every generated client
// must read such a run as it reads any other (CHANGELOG.md, rule 3).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const UNKNOWN_STEP = { status: 'awaiting_review', node_type: 'code_interpreter' } as const;

// Hop-by-hop headers (RFC 9110 7.6.1) stay on their hop; fetch refuses some (Java's HttpClient
// offers `Upgrade: h2c` on every request).
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'upgrade', 'http2-settings', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'expect', 'proxy-connection']);

export async function startLaterVersion(target: string): Promise<{ baseUrl: string; rewrittenSteps(): number; close(): Promise<void> }> {
  let rewritten = 0;
  const server: Server = createServer((req, res) => {
    forward(req, res).catch((err: unknown) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${(err as Error).message}`));
  });
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k))) as Record<string, string>;
    const answer = await fetch(new URL(req.url!, target), { method: req.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    let body = Buffer.from(await answer.arrayBuffer());
    if ((answer.headers.get('content-type') ?? '').startsWith('application/json') && body.length > 0) {
      const json = JSON.parse(body.toString('utf8')) as { data?: { logs?: Record<string, unknown>[] } };
      for (const step of json.data?.logs ?? []) {
        Object.assign(step, UNKNOWN_STEP);
        rewritten++;
      }
      body = Buffer.from(JSON.stringify(json));
    }
    const out = Object.fromEntries([...answer.headers].filter(([k]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)));
    res.writeHead(answer.status, { ...out, 'content-length': String(body.length) }).end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    rewrittenSteps: () => rewritten,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
