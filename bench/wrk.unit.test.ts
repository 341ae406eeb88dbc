import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrkLoad, wrkMissing } from './wrk.ts';

// wrk's refresh chain against a token endpoint that rotates: each token is good once, and each
// answer gives the next. A chain that sent anything but the token its previous answer gave would
// be refused (and counted as an error); one that resent a token would be caught as reuse.
describe.skipIf(wrkMissing() !== undefined)('wrk, the second load generator', () => {
  const live = new Set<string>();
  let reused = 0;
  let next = 0;
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const token = form.get('refresh_token') ?? '';
        const ok =
          req.method === 'POST' &&
          req.headers.authorization === 'Basic Y2xpZW50OnNlY3JldA==' &&
          form.get('grant_type') === 'refresh_token' &&
          live.delete(token);
        if (!ok) {
          if (token.startsWith('r/')) reused += 1;
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
          return;
        }
        const successor = `r/${(next += 1)}+=`; // characters a form must encode
        live.add(successor);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ refresh_token: successor }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refreshes on each connection with the token its previous answer gave', async () => {
    const first = ['r/a+=', 'r/b+=', 'r/c+=', 'r/d+='];
    for (const t of first) live.add(t);
    const result = await wrkLoad({
      kind: 'refresh',
      connections: 4,
      durationSeconds: 1,
      url,
      authorization: 'Basic Y2xpZW50OnNlY3JldA==',
      refreshTokens: first,
    });
    expect(result.errors).toBe(0);
    expect(reused).toBe(0);
    // The server answered every request wrk counted, and at most one more per connection (in
    // flight when the duration ended): one request at a time on each chain.
    expect(next - result.requests).toBeGreaterThanOrEqual(0);
    expect(next - result.requests).toBeLessThanOrEqual(4);
    expect(result.requests).toBeGreaterThan(4);
    expect(result.note).toBeUndefined();
  });

  it('ends a chain whose token is refused, and says so', async () => {
    const result = await wrkLoad({
      kind: 'refresh',
      connections: 2,
      durationSeconds: 1,
      url,
      authorization: 'Basic Y2xpZW50OnNlY3JldA==',
      refreshTokens: ['never-issued-1', 'never-issued-2'],
    });
    expect(result.errors).toBe(2);
    expect(result.requests).toBe(2);
    expect(result.note).toBe('2 of 2 chains broke (refused token), the rest ran on');
  });
});
