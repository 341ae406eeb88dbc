import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from './accounts/accessTokens.ts';
import { createUser } from './accounts/users.ts';
import { startTestServer, type TestServer } from '../test/support/server.ts';
import { testDialects } from '../test/support/db.ts';

describe.each(testDialects())('the assembled app on %s', (dialect) => {
  let server: TestServer;
  let apiKey: string;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const user = await createUser(server.ctx, { login: 'ada', password: 'correct horse battery', name: 'Ada' });
    apiKey = (
      await createAccessToken(server.ctx, {
        userId: user.id,
        namespace: 'ada',
        name: 'k',
        usageScenario: 'paid',
        permissions: ['workflows'],
      })
    ).token;
  });
  afterAll(() => server.close());

  it('GET /healthz is 200 while the process serves', async () => {
    const res = await fetch(`${server.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz is 200 when the database answers', async () => {
    const res = await fetch(`${server.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', checks: { database: 'ok' } });
  });

  it('answers an unknown route with 404 problem+json', async () => {
    const res = await fetch(`${server.baseUrl}/api/nothing-here`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({
      status: 404,
      title: 'Not Found',
      type: expect.stringMatching(/^https:\/\//),
    });
  });

  it('answers a wrong method on a documented path with 405 and Allow', async () => {
    const res = await fetch(`${server.baseUrl}/healthz`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toMatch(/GET/);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers an undocumented method on the token endpoint with 405 and Allow, in the RFC 6749 error shape', async () => {
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses a NUL character that the store cannot hold with 400, not 500', async () => {
    const res = await fetch(
      `${server.baseUrl}/oauth/authorize?response_type=code&scope=user_info&redirect_uri=x&client_id=a%00b`,
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('validates requests against openapi.yaml: a bad query parameter is 400 with a pointer', async () => {
    const res = await fetch(`${server.baseUrl}/api/workflows?per_page=0`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { pointer: string }[] };
    expect(body.errors.map((e) => e.pointer)).toContain('/query/per_page');
  });

  it('answers API requests with the API security headers: nothing may load, frame or sniff them', async () => {
    for (const path of ['/healthz', '/api/nothing-here', '/api/workflows', '/.well-known/jwks.json']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(res.headers.get('content-security-policy'), path).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('cross-origin-resource-policy'), path).toBe('same-origin');
      // Document-only headers are left to pages.
      for (const header of [
        'cross-origin-opener-policy',
        'origin-agent-cluster',
        'x-dns-prefetch-control',
        'x-xss-protection',
      ])
        expect(res.headers.get(header), `${path} ${header}`).toBeNull();
    }
  });

  it('answers pages with the pages security headers: forms post only to us or a client callback, no framing', async () => {
    for (const path of ['/', '/login', '/docs', '/oauth/authorize?client_id=x', '/DOCS/']) {
      const res = await fetch(`${server.baseUrl}${path}`, { redirect: 'manual' });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("form-action 'self' http: https:");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(res.headers.get('cross-origin-opener-policy'), path).toBe('same-origin');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('echoes a well-formed X-Request-Id and puts it in problem bodies', async () => {
    const res = await fetch(`${server.baseUrl}/nope`, { headers: { 'X-Request-Id': 'req-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-123');
    expect(await res.json()).toMatchObject({ request_id: 'req-123' });
  });

  it('logs probes (/healthz, /readyz) below info, so a load balancer polling them does not flood the log; other requests at info', async () => {
    const before = server.logs.length;
    await fetch(`${server.baseUrl}/healthz`);
    await fetch(`${server.baseUrl}/readyz`);
    await fetch(`${server.baseUrl}/.well-known/jwks.json`);
    const lines = server.logs.slice(before).join('');
    expect(lines).toContain('/.well-known/jwks.json');
    expect(lines).not.toMatch(/healthz|readyz/);
  });

  it('never writes a credential to the log: headers, cookies, secret query parameters and form fields', async () => {
    const secrets = [
      apiKey,
      'gho_supersecretaccesstoken',
      'oac_secretcode',
      'cs_secretclientsecret',
      'hunter2-password',
    ];
    await fetch(`${server.baseUrl}/api/workflows`, {
      headers: { Authorization: `Bearer ${apiKey}`, Cookie: 'oa_session=gho_supersecretaccesstoken' },
    });
    await fetch(`${server.baseUrl}/oauth/authorize?client_id=x&code=oac_secretcode&redirect_uri=y`);
    await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=oac_secretcode&client_id=x&client_secret=cs_secretclientsecret',
    });
    await fetch(`${server.baseUrl}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'login=ada&password=hunter2-password',
    });
    const log = server.logs.join('');
    expect(log).toContain('/api/open/oauth/token'); // the requests were logged...
    for (const secret of secrets) expect(log).not.toContain(secret); // ...their secrets were not
  });
});
