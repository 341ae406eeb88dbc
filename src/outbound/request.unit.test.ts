import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowListOf } from './allowList.ts';
import { OutboundError } from './errors.ts';
import { outboundRequest, type OutboundPolicy, type OutboundRequest } from './request.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP server on a loopback address that records what reached it. */
async function listen(host: string, handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { seen, origin: `http://${host}:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

type Target = Awaited<ReturnType<typeof listen>>;
let a: Target;
let b: Target;

beforeAll(async () => {
  a = await listen('127.0.0.1', (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const to = url.searchParams.get('to');
    if (url.pathname === '/redirect')
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { Location: to! }).end();
    else if (url.pathname === '/loop') res.writeHead(302, { Location: '/loop' }).end();
    else if (url.pathname === '/big') res.writeHead(200, { 'Content-Length': 2048 }).end('x'.repeat(2048));
    else if (url.pathname === '/big-chunked') {
      res.writeHead(200);
      for (let i = 0; i < 4; i++) res.write('y'.repeat(512));
      res.end();
    } else if (url.pathname === '/hang') res.writeHead(200).write('partial');
    else
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: true, path: url.pathname }));
  });
  b = await listen('127.0.0.2', (_req, res) => res.writeHead(200).end('b'));
});
afterAll(async () => {
  await a.close();
  await b.close();
});

const base = { method: 'GET', timeoutMs: 5_000, maxBytes: 1024 } satisfies Partial<OutboundRequest>;
const refusedBy = (p: Promise<unknown>, code: string) =>
  expect(p).rejects.toMatchObject({ name: 'OutboundError', code });
const policy = (entries: string[], resolve?: OutboundPolicy['resolve']): OutboundPolicy => ({
  allow: allowListOf(entries),
  resolve,
});

describe('outbound requests from user code (SSRF guard)', () => {
  it('refuses a loopback address by default; nothing reaches the server', async () => {
    const before = a.seen.length;
    await refusedBy(outboundRequest(policy([]), { ...base, url: `${a.origin}/` }), 'http_refused');
    await refusedBy(
      outboundRequest(policy([]), { ...base, url: a.origin.replace('127.0.0.1', '[::ffff:127.0.0.1]') }),
      'http_refused',
    );
    expect(a.seen.length).toBe(before);
  });

  it('refuses the cloud metadata address 169.254.169.254, however it is spelled', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://[::ffff:a9fe:a9fe]/',
    ]) {
      await expect(outboundRequest(policy([]), { ...base, url })).rejects.toThrow(/link-local address/);
    }
  });

  it('refuses a name that resolves to 127.0.0.1 (localhost, or any DNS answer)', async () => {
    const port = new URL(a.origin).port;
    await refusedBy(outboundRequest(policy([]), { ...base, url: `http://localhost:${port}/` }), 'http_refused');
    const dns = policy([], async () => [{ address: '127.0.0.1', family: 4 }]);
    const refusal = outboundRequest(dns, { ...base, url: `http://evil.example:${port}/` });
    await expect(refusal).rejects.toThrow(
      'The host evil.example is refused: outbound requests may reach only public addresses (an operator may allow it in WORKFLOW_HTTP_ALLOW_HOSTS).',
    );
    // What an internal name resolves to is not shown to the run's user (it would map the network).
    await expect(refusal).rejects.not.toThrow(/127\.0\.0\.1|loopback|resolves/);
  });

  it('refuses a name any of whose addresses is refused, not only the first', async () => {
    const dns = policy([], async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ]);
    await refusedBy(outboundRequest(dns, { ...base, url: 'http://mixed.example/' }), 'http_refused');
  });

  it('checks the address it connects to, at connect time: a name rebound to loopback after an allowed answer is refused', async () => {
    const answers = ['127.0.0.2', '127.0.0.1'];
    const rebinding = policy(['127.0.0.2'], async () => [{ address: answers.shift()!, family: 4 }]);
    const port = new URL(b.origin).port;
    const first = await outboundRequest(rebinding, { ...base, url: `http://rebind.example:${port}/` });
    expect(String(first.body)).toBe('b');
    await refusedBy(outboundRequest(rebinding, { ...base, url: `http://rebind.example:${port}/` }), 'http_refused');
    expect(b.seen).toHaveLength(1);
  });

  it('reaches an allow-listed address (WORKFLOW_HTTP_ALLOW_HOSTS) and returns status, headers and body', async () => {
    const response = await outboundRequest(policy(['127.0.0.1']), { ...base, url: `${a.origin}/hello` });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(String(response.body))).toEqual({ ok: true, path: '/hello' });
  });

  it('refuses a redirect to a private or metadata address, even from an allowed host', async () => {
    for (const to of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      const url = `${a.origin}/redirect?to=${encodeURIComponent(to)}`;
      await refusedBy(outboundRequest(policy(['127.0.0.1']), { ...base, url }), 'http_refused');
    }
  });

  it('keeps headers on a same-origin redirect and drops credentials on a cross-origin one', async () => {
    const headers = { Authorization: 'Bearer s3cret', 'X-Api-Key': 'k', Accept: 'text/plain' };
    await outboundRequest(policy(['127.0.0.1', '127.0.0.2']), {
      ...base,
      headers,
      url: `${a.origin}/redirect?to=/same`,
    });
    expect(a.seen.at(-1)).toMatchObject({
      url: '/same',
      headers: { authorization: 'Bearer s3cret', 'x-api-key': 'k' },
    });
    const response = await outboundRequest(policy(['127.0.0.1', '127.0.0.2']), {
      ...base,
      headers,
      url: `${a.origin}/redirect?to=${encodeURIComponent(b.origin + '/')}`,
    });
    expect(response.url).toBe(`${b.origin}/`);
    const last = b.seen.at(-1)!;
    expect(last.headers.authorization).toBeUndefined();
    expect(last.headers['x-api-key']).toBeUndefined();
    expect(last.headers.accept).toBe('text/plain');
  });

  it('turns a POST into a GET without body on 303 (RFC 9110 15.4.4) and keeps it on 307', async () => {
    const post = { ...base, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' };
    await outboundRequest(policy(['127.0.0.1']), { ...post, url: `${a.origin}/redirect?status=303&to=/after303` });
    expect(a.seen.at(-1)).toMatchObject({ method: 'GET', url: '/after303', body: '' });
    await outboundRequest(policy(['127.0.0.1']), { ...post, url: `${a.origin}/redirect?status=307&to=/after307` });
    expect(a.seen.at(-1)).toMatchObject({ method: 'POST', url: '/after307', body: '{"a":1}' });
  });

  it('follows at most maxRedirects redirects; 0 returns the redirect itself', async () => {
    await refusedBy(
      outboundRequest(policy(['127.0.0.1']), { ...base, maxRedirects: 3, url: `${a.origin}/loop` }),
      'http_too_many_redirects',
    );
    const response = await outboundRequest(policy(['127.0.0.1']), {
      ...base,
      maxRedirects: 0,
      url: `${a.origin}/loop`,
    });
    expect(response.status).toBe(302);
  });

  it('bounds the response body by maxBytes, declared or streamed', async () => {
    await refusedBy(
      outboundRequest(policy(['127.0.0.1']), { ...base, url: `${a.origin}/big` }),
      'http_response_too_large',
    );
    await refusedBy(
      outboundRequest(policy(['127.0.0.1']), { ...base, url: `${a.origin}/big-chunked` }),
      'http_response_too_large',
    );
  });

  it('bounds the whole exchange by timeoutMs, body included', async () => {
    await refusedBy(
      outboundRequest(policy(['127.0.0.1']), { ...base, timeoutMs: 200, url: `${a.origin}/hang` }),
      'http_timeout',
    );
  });

  it('is cancelled by the caller’s signal as an AbortError, not a failure of the request', async () => {
    const controller = new AbortController();
    const pending = outboundRequest(policy(['127.0.0.1']), {
      ...base,
      signal: controller.signal,
      url: `${a.origin}/hang`,
    });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('calls only http and https URLs without credentials in them', async () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'not a url', 'http://user:pw@example.com/']) {
      await expect(outboundRequest(policy([]), { ...base, url })).rejects.toBeInstanceOf(OutboundError);
      await refusedBy(outboundRequest(policy([]), { ...base, url }), 'http_invalid_url');
    }
  });
});
