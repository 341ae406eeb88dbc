import type * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { createFixture, discover, obtainTokens } from '../support/oauthFlow.ts';
import { seedGraph } from '../support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Every problem+json answer carries its problem's own stable `code` (openapi.yaml Problem.code),
// beside the `type` of its status class: two 404s of different things are told apart by code.

describe('problem+json answers carry their own code', () => {
  let server: TestServer;
  let key: string;
  let keyWithoutWorkflows: string;
  let userInfoToken: string;
  let apiKeyToken: string;
  let login: string;
  let workflowId: string;

  beforeAll(async () => {
    server = await startTestServer();
    await createUser(server.ctx, { login: 'coder', password: 'c-o-d-e-r-password' });
    key = (
      await createAccessToken(server.ctx, {
        userLogin: 'coder',
        namespace: 'coder',
        name: 'k',
        usageScenario: 'paid',
        permissions: ['workflows'],
      })
    ).token;
    keyWithoutWorkflows = (
      await createAccessToken(server.ctx, {
        userLogin: 'coder',
        namespace: 'coder',
        name: 'bare',
        usageScenario: 'paid',
      })
    ).token;
    const created = await send('POST', '/api/workflows', key, { name: 'codes', ...seedGraph() });
    expect(created.status).toBe(201);
    workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    const as: oauth.AuthorizationServer = await discover(server.baseUrl);
    const f = await createFixture(server.ctx.db);
    login = f.login;
    userInfoToken = (await obtainTokens(server.baseUrl, as, f, 'user_info')).tokens.access_token;
    apiKeyToken = (await obtainTokens(server.baseUrl, as, f, 'api_key')).tokens.access_token;
  });
  afterAll(async () => {
    await server?.close();
  });

  function send(method: string, path: string, bearer?: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(`${server.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function expectProblem(res: Response, status: number, code: string, type: string): Promise<void> {
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status, code, type: `https://docs.openauth.dev/problems/${type}` });
    expect(res.status).toBe(status);
  }

  it('tells a missing workflow, a missing run and a missing route apart (all 404 not-found)', async () => {
    await expectProblem(await send('GET', '/api/workflows/wf_missing', key), 404, 'workflow_not_found', 'not-found');
    await expectProblem(
      await send('GET', `/api/workflows/${workflowId}/runs/run_missing`, key),
      404,
      'run_not_found',
      'not-found',
    );
    await expectProblem(await send('GET', '/api/nothing-here', key), 404, 'route_not_found', 'not-found');
  });

  it("tells another namespace's token apart on the open API (access_token_not_found)", async () => {
    await expectProblem(
      await send('GET', `/api/open/v1/${login}/tokens/999999`, apiKeyToken),
      404,
      'access_token_not_found',
      'not-found',
    );
  });

  it('names each credential failure: none, an unknown key, another kind of token, a missing permission, a missing scope', async () => {
    await expectProblem(await send('GET', '/api/workflows'), 401, 'missing_credentials', 'unauthorized');
    const unknownKey = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expectProblem(await send('GET', '/api/workflows', unknownKey), 401, 'invalid_api_key', 'unauthorized');
    // The reads take an OAuth token of workflows:read too; the writes take API keys only.
    await expectProblem(
      await send('GET', '/api/workflows', userInfoToken),
      403,
      'insufficient_scope',
      'insufficient-scope',
    );
    await expectProblem(
      await send('POST', '/api/workflows', userInfoToken, { name: 'kind', ...seedGraph() }),
      401,
      'wrong_token_kind',
      'unauthorized',
    );
    await expectProblem(
      await send('GET', '/api/workflows', keyWithoutWorkflows),
      403,
      'missing_permission',
      'forbidden',
    );
    await expectProblem(
      await send('GET', '/api/open/v1/userinfo', 'ghu_not_a_token'),
      401,
      'invalid_access_token',
      'unauthorized',
    );
    await expectProblem(
      await send('GET', `/api/open/v1/${login}/tokens`, userInfoToken),
      403,
      'insufficient_scope',
      'insufficient-scope',
    );
  });

  it('names bad input: the contract (invalid_request), a graph (invalid_workflow), the method (method_not_allowed)', async () => {
    await expectProblem(await send('GET', '/api/workflows?per_page=1000', key), 400, 'invalid_request', 'bad-request');
    const invalid = await send('POST', '/api/workflows', key, { name: 'bad', nodes: [], edges: [] });
    await expectProblem(invalid, 422, 'invalid_workflow', 'invalid-workflow');
    await expectProblem(await send('DELETE', '/api/workflows', key), 405, 'method_not_allowed', 'method-not-allowed');
  });

  it('names a stale If-Match (stale_version, 412)', async () => {
    const res = await fetch(`${server.baseUrl}/api/workflows/${workflowId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'if-match': '"99"' },
      body: JSON.stringify({ name: 'renamed' }),
    });
    await expectProblem(res, 412, 'stale_version', 'precondition-failed');
  });
});
