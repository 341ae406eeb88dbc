// CORS policy (docs/oauth.md "CORS"): the service sends no CORS headers at all. Browsers therefore keep
// other origins from reading any response, and a cross-origin preflight fails: the authorize,
// token, revocation, settings, workflows and open APIs are meant for servers and our own pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

const ORIGIN = 'https://evil.example';

describe('CORS: none, on any endpoint', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  const corsHeaders = (res: Response) => [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));

  it.each([
    ['GET', '/oauth/authorize?response_type=code&client_id=app_x'],
    ['POST', '/api/open/oauth/token'],
    ['POST', '/api/open/oauth/revoke'],
    ['POST', '/api/open/oauth/par'],
    ['GET', '/settings/applications'],
    ['GET', '/login'],
    ['GET', '/api/workflows'],
    ['GET', '/api/open/v1/userinfo'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/jwks.json'],
    ['POST', '/serverless/v1/chat/completions'],
  ])(
    'answers %s %s from another origin without Access-Control-Allow-Origin, and refuses its preflight',
    async (method, path) => {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: {
          origin: ORIGIN,
          ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(method === 'POST' ? { body: '' } : {}),
        redirect: 'manual',
      });
      await res.arrayBuffer();
      expect(res.status).not.toBe(500);
      expect(corsHeaders(res)).toEqual([]);

      const preflight = await fetch(`${server.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization',
        },
      });
      await preflight.arrayBuffer();
      // API paths answer 405 with Allow (src/http/methods.ts), pages express's plain OPTIONS answer;
      // with no Access-Control-Allow-* header either way, the browser fails the preflight.
      expect(preflight.status).not.toBe(500);
      if (preflight.status === 405) expect(preflight.headers.get('allow')).toContain(method);
      expect(corsHeaders(preflight)).toEqual([]);
    },
  );
});
