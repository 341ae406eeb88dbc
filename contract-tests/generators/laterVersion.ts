// The service as a later minor version of the contract may answer it: a proxy in front of the live
// service that adds a field no contract lists to every JSON object of every answer, a node of a
// type no contract lists to every workflow (any object with `nodes` and `edges`), and gives every
// run step a `status` and a `node_type` that no released contract lists. openapi.yaml promises
// that a client generated from it reads all of that (CHANGELOG.md, rules 3 and 6).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const UNKNOWN_STEP = { status: 'awaiting_review', node_type: 'code_interpreter' } as const;
export const UNKNOWN_FIELD = 'later_field';
export const UNKNOWN_NODE = { id: 'later_node', type: 'vector_search', config: { index: 'docs', top_k: 4 } } as const;
/** Run data the drivers compare with what they sent: values, not objects of the contract. */
const DATA = new Set(['inputs', 'input_values', 'output', 'output_value', 'input']);

// Hop-by-hop headers (RFC 9110 7.6.1) stay on their hop; fetch refuses some (Java's HttpClient
// offers `Upgrade: h2c` on every request).
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'accept-encoding',
  'upgrade',
  'http2-settings',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

interface Counts {
  steps: number;
  nodes: number;
  fields: number;
}

function later(value: unknown, counts: Counts): void {
  if (Array.isArray(value)) return value.forEach((v) => later(v, counts));
  if (typeof value !== 'object' || value === null) return;
  const object = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(object)) if (!DATA.has(key)) later(v, counts);
  if (Array.isArray(object.nodes) && Array.isArray(object.edges)) {
    object.nodes.push(structuredClone(UNKNOWN_NODE));
    counts.nodes++;
  }
  if (typeof object.node_id === 'string' && typeof object.node_type === 'string') {
    Object.assign(object, UNKNOWN_STEP);
    counts.steps++;
  }
  object[UNKNOWN_FIELD] = { added_in: 'a later minor version' };
  counts.fields++;
}

export async function startLaterVersion(
  target: string,
): Promise<{ baseUrl: string; counts(): Counts; close(): Promise<void> }> {
  const counts: Counts = { steps: 0, nodes: 0, fields: 0 };
  const server: Server = createServer((req, res) => {
    forward(req, res).catch((err: unknown) =>
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${(err as Error).message}`),
    );
  });
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k))) as Record<
      string,
      string
    >;
    const answer = await fetch(new URL(req.url!, target), {
      method: req.method!,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    let body = Buffer.from(await answer.arrayBuffer());
    if (/^application\/(problem\+)?json/.test(answer.headers.get('content-type') ?? '') && body.length > 0) {
      const json = JSON.parse(body.toString('utf8')) as unknown;
      later(json, counts);
      body = Buffer.from(JSON.stringify(json));
    }
    const out = Object.fromEntries(
      [...answer.headers].filter(
        ([k]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k),
      ),
    );
    res.writeHead(answer.status, { ...out, 'content-length': String(body.length) }).end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => ({ ...counts }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
