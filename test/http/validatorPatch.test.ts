import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import url from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// patches/express-openapi-validator+<version>.patch (docs/architecture.md, "The validator patch"): pinned to the
// exact version it was written for, applied by patch-package on install, and each hunk's behaviour
// seen through real requests. Every test here fails when the patch is not applied.

const root = new URL('../../', import.meta.url);
const installed: string = JSON.parse(
  readFileSync(new URL('node_modules/express-openapi-validator/package.json', root), 'utf8'),
).version;
const patchFile = `patches/express-openapi-validator+${installed}.patch`;
// What the validator itself requires (resolved from its own folder), to count calls to it.
const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const pathToRegexp: { pathToRegexp: (...args: unknown[]) => unknown } = fromValidator('path-to-regexp');

describe('the express-openapi-validator patch', () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer();
    await createUser(server.ctx, { login: 'patched', password: 'p-a-t-c-h-e-d-password' });
    key = (
      await createAccessToken(server.ctx, {
        userLogin: 'patched',
        namespace: 'patched',
        name: 'k',
        usageScenario: 'paid',
        permissions: ['workflows'],
      })
    ).token;
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const get = (path: string) => fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });

  it('is pinned: package.json asks for exactly the installed version, the one the patch names, and every hunk is in place', () => {
    const wanted = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).dependencies[
      'express-openapi-validator'
    ];
    expect(wanted).toBe(installed);
    expect(existsSync(new URL(patchFile, root))).toBe(true);
    // Reversing applies cleanly only when every hunk of the patch is in the installed files.
    expect(() =>
      execFileSync('git', ['apply', '--check', '--reverse', patchFile], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });

  it('route cache: a request compiles no route pattern (openapi.metadata.js)', async () => {
    expect((await get('/api/workflows')).status).toBe(200); // the first request builds the table
    const compiled = vi.spyOn(pathToRegexp, 'pathToRegexp');
    for (const path of ['/api/workflows', '/api/workflows/wf_missing', '/api/workflows/wf_missing/runs'])
      await get(path);
    expect(compiled).not.toHaveBeenCalled();
  });

  it("security: the requirements are tried in the spec's order, stopping at the first that passes or refusing with the first's reason (openapi.security.js)", async () => {
    // The gateway takes [proxyToken] or [apiKey]. A JWT that does not verify is refused as a proxy
    // token; run side by side, the API-key check refused it first as another kind of token.
    const forged = 'eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUifQ.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    const res = await fetch(`${server.baseUrl}/serverless/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${forged}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).error.message).toMatch(/proxy token is invalid/);
  });

  it('query parsing: an operation without query parameters never runs the legacy url.parse (req.parameter.mutator.js)', async () => {
    const parse = vi.spyOn(url, 'parse');
    expect((await get('/api/workflows/wf_missing')).status).toBe(404);
    expect(parse.mock.calls.filter(([u]) => String(u).startsWith('/api/workflows/wf_missing'))).toEqual([]);
    // An operation with query parameters still has its raw query checked.
    expect((await get('/api/workflows?per_page=5')).status).toBe(200);
    expect(parse.mock.calls.some(([u]) => String(u).startsWith('/api/workflows?per_page=5'))).toBe(true);
  });
});
