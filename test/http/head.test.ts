import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The 405 answers promise HEAD wherever GET is allowed (`Allow: GET, HEAD`); RFC 9110 9.3.2: HEAD
// answers as GET would, without the content.

describe('HEAD answers as GET, as Allow promises', () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer();
    await createUser(server.ctx, { login: 'header', password: 'h-e-a-d-e-r-password' });
    key = (
      await createAccessToken(server.ctx, {
        userLogin: 'header',
        namespace: 'header',
        name: 'k',
        usageScenario: 'paid',
        permissions: ['workflows'],
      })
    ).token;
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    '/healthz',
    '/readyz',
    '/.well-known/jwks.json',
    '/.well-known/oauth-authorization-server',
    '/api/workflows',
    '/api/workflows/wf_missing',
    '/login',
  ])('HEAD %s', async (path) => {
    const headers = { authorization: `Bearer ${key}` };
    const get = await fetch(`${server.baseUrl}${path}`, { headers });
    const head = await fetch(`${server.baseUrl}${path}`, { method: 'HEAD', headers });
    expect(head.status).toBe(get.status);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
  });
});
