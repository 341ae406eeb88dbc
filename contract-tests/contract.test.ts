import { describe, expect, it } from 'vitest';
import { createApiClient, formBody } from '../client/src/index.ts';
import { allOperationIds, conformanceProblems, findOperation, namedExamples, spec } from './spec.ts';
import { contractTarget } from './target.ts';
import { seedGraph } from '../test/support/seedWorkflow.ts';

// The same assertions run against the Prism mock and the live service: the status each request
// must get, and that the response conforms to openapi.yaml (documented status, content type, schema).
// `Prefer: code=N` tells Prism which documented response to serve; the live service ignores it.

const target = contractTarget();
const anonymous = createApiClient(target.baseUrl);
const withKey = createApiClient(target.baseUrl, { bearer: target.apiKey });
const withOAuth = createApiClient(target.baseUrl, { bearer: target.accessToken });
const covered = new Set<string>();

async function expectConformant(
  operationId: string,
  call: Promise<{ response: Response; data?: unknown; error?: unknown }>,
  status: number | number[],
): Promise<{ status: number; body: unknown; response: Response }> {
  const { response, data, error } = await call;
  const body = data ?? error;
  covered.add(operationId);
  const allowed = Array.isArray(status) ? status : [status];
  expect(allowed, `${operationId} answered ${response.status}: ${JSON.stringify(body)}`).toContain(response.status);
  expect(conformanceProblems(operationId, response.status, response.headers.get('content-type'), body)).toEqual([]);
  return { status: response.status, body, response };
}

/** A request the mock accepts for each operation (Prism validates it before it answers). */
function exampleRequest(operationId: string): {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
} {
  const json = { 'Content-Type': 'application/json' };
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const key = { Authorization: 'Bearer sk_mock' };
  const oauth = { Authorization: 'Bearer gho_mock' };
  const wf = '/api/workflows/wf_01JD6Z3V8Q4X2M7N5P9R0T1W';
  const requests: Record<string, ReturnType<typeof exampleRequest>> = {
    authorize: {
      method: 'GET',
      path: '/oauth/authorize?response_type=code&client_id=app_1&redirect_uri=https%3A%2F%2Fc.example%2Fcb&scope=user_info',
      headers: {},
    },
    exchangeToken: {
      method: 'POST',
      path: '/api/open/oauth/token',
      headers: form,
      body: 'grant_type=refresh_token&refresh_token=ghr_1&client_id=app_1&client_secret=cs_1',
    },
    revokeToken: {
      method: 'POST',
      path: '/api/open/oauth/revoke',
      headers: form,
      body: 'token=ghr_1&client_id=app_1&client_secret=cs_1',
    },
    introspectToken: {
      method: 'POST',
      path: '/api/open/oauth/introspect',
      headers: form,
      body: 'token=gho_1&client_id=app_1&client_secret=cs_1',
    },
    pushAuthorizationRequest: {
      method: 'POST',
      path: '/api/open/oauth/par',
      headers: form,
      body: 'response_type=code&redirect_uri=https%3A%2F%2Fc.example%2Fcb&scope=user_info&client_id=app_1&client_secret=cs_1',
    },
    startDeviceAuthorization: {
      method: 'POST',
      path: '/api/open/oauth/device_authorization',
      headers: form,
      body: 'scope=user_info&client_id=app_1&client_secret=cs_1',
    },
    registerClient: {
      method: 'POST',
      path: '/api/open/oauth/register',
      headers: json,
      body: JSON.stringify({ redirect_uris: ['http://localhost:33418/callback'], token_endpoint_auth_method: 'none' }),
    },
    readClientRegistration: {
      method: 'GET',
      path: '/api/open/oauth/register/app_1',
      headers: { Authorization: 'Bearer rat_1' },
    },
    updateClientRegistration: {
      method: 'PUT',
      path: '/api/open/oauth/register/app_1',
      headers: { Authorization: 'Bearer rat_1', ...json },
      body: JSON.stringify({ client_id: 'app_1', redirect_uris: ['http://localhost:33418/callback'] }),
    },
    deleteClientRegistration: {
      method: 'DELETE',
      path: '/api/open/oauth/register/app_1',
      headers: { Authorization: 'Bearer rat_1' },
    },
    getUserInfo: { method: 'GET', path: '/api/open/v1/userinfo', headers: oauth },
    listOrgs: { method: 'GET', path: '/api/open/v1/orgs', headers: oauth },
    listAccessTokens: { method: 'GET', path: '/api/open/v1/demo/tokens', headers: oauth },
    getAccessToken: { method: 'GET', path: '/api/open/v1/demo/tokens/42', headers: oauth },
    getJwks: { method: 'GET', path: '/.well-known/jwks.json', headers: {} },
    getAuthorizationServerMetadata: { method: 'GET', path: '/.well-known/oauth-authorization-server', headers: {} },
    getOpenIdConfiguration: { method: 'GET', path: '/.well-known/openid-configuration', headers: {} },
    getOpenApiResourceMetadata: { method: 'GET', path: '/.well-known/oauth-protected-resource/api/open', headers: {} },
    getWorkflowsResourceMetadata: {
      method: 'GET',
      path: '/.well-known/oauth-protected-resource/api/workflows',
      headers: {},
    },
    getMcpResourceMetadata: { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', headers: {} },
    createChatCompletion: {
      method: 'POST',
      path: '/serverless/v1/chat/completions',
      headers: { ...key, ...json },
      body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
    },
    listWorkflows: { method: 'GET', path: '/api/workflows', headers: key },
    listWorkflowModels: { method: 'GET', path: '/api/workflows/models', headers: key },
    createWorkflow: {
      method: 'POST',
      path: '/api/workflows',
      headers: { ...key, ...json },
      body: JSON.stringify({ name: 'x' }),
    },
    getWorkflow: { method: 'GET', path: wf, headers: key },
    updateWorkflow: { method: 'PATCH', path: wf, headers: { ...key, ...json }, body: JSON.stringify({ name: 'x' }) },
    deleteWorkflow: { method: 'DELETE', path: wf, headers: key },
    runWorkflow: {
      method: 'POST',
      path: `${wf}/run`,
      headers: { ...key, ...json },
      body: JSON.stringify({ inputs: {} }),
    },
    listRuns: { method: 'GET', path: `${wf}/runs`, headers: key },
    getRun: { method: 'GET', path: `${wf}/runs/run_1`, headers: key },
    streamRunEvents: { method: 'GET', path: `${wf}/runs/run_1/events`, headers: key },
    cancelRun: { method: 'POST', path: `${wf}/runs/run_1/cancel`, headers: key },
    retryRun: { method: 'POST', path: `${wf}/runs/run_1/retry`, headers: { ...key, ...json }, body: '{}' },
    testWorkflowNode: {
      method: 'POST',
      path: `${wf}/nodes/summarise/test`,
      headers: { ...key, ...json },
      body: JSON.stringify({ upstream: { in: 'The export button does nothing.' } }),
    },
    resumeRun: {
      method: 'POST',
      path: `${wf}/runs/run_1/resume`,
      headers: { ...key, ...json },
      body: JSON.stringify({ answer: { approved: true } }),
    },
    listSecrets: { method: 'GET', path: '/api/secrets', headers: key },
    putSecret: {
      method: 'PUT',
      path: '/api/secrets/GITHUB_TOKEN',
      headers: { ...key, ...json },
      body: JSON.stringify({ value: 'x' }),
    },
    deleteSecret: { method: 'DELETE', path: '/api/secrets/GITHUB_TOKEN', headers: key },
    listTriggers: { method: 'GET', path: `${wf}/triggers`, headers: key },
    createTrigger: {
      method: 'POST',
      path: `${wf}/triggers`,
      headers: { ...key, ...json },
      body: JSON.stringify({ name: 'x' }),
    },
    deleteTrigger: { method: 'DELETE', path: `${wf}/triggers/trg_1`, headers: key },
    rotateTrigger: { method: 'POST', path: `${wf}/triggers/trg_1/rotate`, headers: key },
    updateTrigger: {
      method: 'PATCH',
      path: `${wf}/triggers/trg_1`,
      headers: { ...key, ...json },
      body: JSON.stringify({ name: 'x' }),
    },
    listRunSteps: { method: 'GET', path: `${wf}/runs/run_1/steps`, headers: key },
    listRunEvents: { method: 'GET', path: `${wf}/runs/run_1/event-log`, headers: key },
    runHook: {
      method: 'POST',
      path: `/hooks/wht_${'A'.repeat(43)}`,
      headers: json,
      body: JSON.stringify({ ticket: 'x' }),
    },
    listWorkflowVersions: { method: 'GET', path: `${wf}/versions`, headers: key },
    getWorkflowVersion: { method: 'GET', path: `${wf}/versions/1`, headers: key },
    restoreWorkflowVersion: { method: 'POST', path: `${wf}/versions/1/restore`, headers: key },
    listSchedules: { method: 'GET', path: `${wf}/schedules`, headers: key },
    createSchedule: {
      method: 'POST',
      path: `${wf}/schedules`,
      headers: { ...key, ...json },
      body: JSON.stringify({ cron: '0 8 * * 1-5' }),
    },
    getSchedule: { method: 'GET', path: `${wf}/schedules/sch_1`, headers: key },
    updateSchedule: {
      method: 'PATCH',
      path: `${wf}/schedules/sch_1`,
      headers: { ...key, ...json },
      body: JSON.stringify({ enabled: false }),
    },
    deleteSchedule: { method: 'DELETE', path: `${wf}/schedules/sch_1`, headers: key },
    listCallbacks: { method: 'GET', path: `${wf}/callbacks`, headers: key },
    createCallback: {
      method: 'POST',
      path: `${wf}/callbacks`,
      headers: { ...key, ...json },
      body: JSON.stringify({ url: 'https://hooks.example.com/runs' }),
    },
    deleteCallback: { method: 'DELETE', path: `${wf}/callbacks/cb_1`, headers: key },
    listCallbackAttempts: { method: 'GET', path: `${wf}/callbacks/cb_1/attempts`, headers: key },
    enableCallback: { method: 'POST', path: `${wf}/callbacks/cb_1/enable`, headers: key },
    getLiveness: { method: 'GET', path: '/healthz', headers: {} },
    getReadiness: { method: 'GET', path: '/readyz', headers: {} },
    getWorkflowBudget: { method: 'GET', path: `${wf}/budget`, headers: key },
    putWorkflowBudget: {
      method: 'PUT',
      path: `${wf}/budget`,
      headers: { ...key, ...json },
      body: JSON.stringify({ monthly_limit: 10 }),
    },
    deleteWorkflowBudget: { method: 'DELETE', path: `${wf}/budget`, headers: key },
    getApiKeyBudget: { method: 'GET', path: '/api/access-tokens/42/budget', headers: key },
    putApiKeyBudget: {
      method: 'PUT',
      path: '/api/access-tokens/42/budget',
      headers: { ...key, ...json },
      body: JSON.stringify({ monthly_limit: 10 }),
    },
    deleteApiKeyBudget: { method: 'DELETE', path: '/api/access-tokens/42/budget', headers: key },
  };
  return requests[operationId]!;
}

const seedWorkflow = {
  name: 'Ticket summariser',
  description: 'Summarises a support ticket in one line.',
  ...seedGraph(),
};

describe(`contract of openapi.yaml against ${target.mock ? 'the Prism mock' : 'the live service'} at ${target.baseUrl}`, () => {
  describe('health', () => {
    it('GET /healthz answers 200', async () => {
      await expectConformant('getLiveness', anonymous.GET('/healthz'), 200);
    });
    it('GET /readyz answers 200 when the database and queue are reachable', async () => {
      await expectConformant('getReadiness', anonymous.GET('/readyz'), 200);
    });
  });

  describe('oauth', () => {
    it('GET /oauth/authorize with an unknown client answers 400 and does not redirect', async () => {
      const call = anonymous.GET('/oauth/authorize', {
        params: {
          query: {
            response_type: 'code',
            client_id: 'app_unknown',
            redirect_uri: 'https://evil.example/cb',
            scope: 'user_info',
            state: 's1',
          },
        },
        headers: { Prefer: 'code=400' },
        parseAs: 'text',
      });
      const { response } = await expectConformant('authorize', call, 400);
      expect(response.headers.get('location')).toBeNull();
    });

    it('POST /api/open/oauth/token rotates a refresh token (credentials in the body)', async () => {
      const call = anonymous.POST('/api/open/oauth/token', {
        body: {
          grant_type: 'refresh_token',
          refresh_token: target.refreshToken,
          client_id: target.clientId,
          client_secret: target.clientSecret,
        },
        ...formBody,
      });
      const { body, response } = await expectConformant('exchangeToken', call, 200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(body).toMatchObject({ token_type: 'Bearer' });
    });

    it('POST /api/open/oauth/token with an unknown grant_type is unsupported_grant_type', async () => {
      const call = anonymous.POST('/api/open/oauth/token', {
        body: {
          grant_type: 'password' as 'refresh_token',
          client_id: target.clientId,
          client_secret: target.clientSecret,
        },
        ...formBody,
      });
      await expectConformant('exchangeToken', call, 400);
    });

    it('POST /api/open/oauth/token with a wrong secret over Basic is invalid_client 401', async () => {
      const basic = createApiClient(target.baseUrl, { basic: { clientId: target.clientId, clientSecret: 'cs_wrong' } });
      const call = basic.POST('/api/open/oauth/token', {
        body: { grant_type: 'refresh_token', refresh_token: 'ghr_unknown' },
        ...formBody,
        headers: { ...formBody.headers, Prefer: 'code=401' },
      });
      await expectConformant('exchangeToken', call, 401);
    });

    it('POST /api/open/oauth/revoke answers 200 with a JSON {} even for an unknown token (RFC 7009 2.2)', async () => {
      const call = anonymous.POST('/api/open/oauth/revoke', {
        body: { token: 'gho_not_a_real_token', client_id: target.clientId, client_secret: target.clientSecret },
        ...formBody,
      });
      const { body, response } = await expectConformant('revokeToken', call, 200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(body).toEqual({});
    });

    it('POST /api/open/oauth/introspect answers {active: false} for an unknown token, and 401 to a wrong secret (RFC 7662)', async () => {
      const call = anonymous.POST('/api/open/oauth/introspect', {
        body: { token: 'gho_not_a_real_token', client_id: target.clientId, client_secret: target.clientSecret },
        ...formBody,
        headers: { ...formBody.headers, Prefer: 'example=inactive' },
      });
      const { body, response } = await expectConformant('introspectToken', call, 200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(body).toEqual({ active: false });
      const wrong = anonymous.POST('/api/open/oauth/introspect', {
        body: { token: 'gho_not_a_real_token', client_id: target.clientId, client_secret: 'cs_wrong' },
        ...formBody,
        headers: { ...formBody.headers, Prefer: 'code=401' },
      });
      await expectConformant('introspectToken', wrong, 401);
    });

    it('POST /api/open/oauth/par with a wrong client secret is invalid_client 401', async () => {
      const call = anonymous.POST('/api/open/oauth/par', {
        body: {
          response_type: 'code',
          redirect_uri: 'https://client.example.com/callback',
          scope: 'user_info',
          client_id: target.clientId,
          client_secret: 'cs_wrong',
        },
        ...formBody,
        headers: { ...formBody.headers, Prefer: 'code=401' },
      });
      await expectConformant('pushAuthorizationRequest', call, 401);
    });

    it('POST /api/open/oauth/device_authorization answers a device code and a user code (RFC 8628 3.2)', async () => {
      const call = anonymous.POST('/api/open/oauth/device_authorization', {
        body: { scope: 'user_info', client_id: target.clientId, client_secret: target.clientSecret },
        ...formBody,
      });
      const { body, response } = await expectConformant('startDeviceAuthorization', call, 200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect((body as { user_code: string }).user_code).toMatch(
        /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/,
      );
    });

    it('POST /api/open/oauth/device_authorization with an unknown scope is invalid_scope', async () => {
      const call = anonymous.POST('/api/open/oauth/device_authorization', {
        body: { scope: 'admin', client_id: target.clientId, client_secret: target.clientSecret },
        ...formBody,
        headers: { ...formBody.headers, Prefer: 'code=400' },
      });
      await expectConformant('startDeviceAuthorization', call, 400);
    });

    it('POST /api/open/oauth/register is 403 access_denied while the operator has not enabled client registration (the default)', async () => {
      const call = anonymous.POST('/api/open/oauth/register', {
        body: { redirect_uris: ['http://localhost:33418/callback'], token_endpoint_auth_method: 'none' },
        headers: { Prefer: 'code=403' },
      });
      const { body } = await expectConformant('registerClient', call, 403);
      expect((body as { error: string }).error).toBe('access_denied');
    });

    it('the registration management operations (RFC 7592) answer 401 invalid_token to a token of no client', async () => {
      const headers = { Authorization: 'Bearer rat_not_a_real_token', Prefer: 'code=401' };
      const params = { path: { client_id: 'app_not_registered' } };
      await expectConformant(
        'readClientRegistration',
        anonymous.GET('/api/open/oauth/register/{client_id}', { params, headers }),
        401,
      );
      await expectConformant(
        'updateClientRegistration',
        anonymous.PUT('/api/open/oauth/register/{client_id}', {
          params,
          headers,
          body: { client_id: 'app_not_registered', redirect_uris: ['http://localhost:33418/callback'] },
        }),
        401,
      );
      await expectConformant(
        'deleteClientRegistration',
        anonymous.DELETE('/api/open/oauth/register/{client_id}', { params, headers }),
        401,
      );
    });

    it("POST /api/open/oauth/token without a form body is a 415 whose description is ours, not the validator's", async () => {
      const call = anonymous.POST('/api/open/oauth/token', {
        body: { grant_type: 'refresh_token' },
        bodySerializer: () => 'grant_type=refresh_token',
        headers: { 'Content-Type': 'text/plain', Prefer: 'code=415' },
      });
      const { body } = await expectConformant('exchangeToken', call, 415);
      expect((body as { error_description: string }).error_description).toBe(
        'Content-Type must be application/x-www-form-urlencoded.',
      );
    });

    it('GET /.well-known/oauth-authorization-server describes the endpoints', async () => {
      await expectConformant(
        'getAuthorizationServerMetadata',
        anonymous.GET('/.well-known/oauth-authorization-server'),
        200,
      );
    });

    it('GET /.well-known/openid-configuration describes the endpoints and the ID token (OpenID Connect Discovery 1.0)', async () => {
      const { body } = await expectConformant(
        'getOpenIdConfiguration',
        anonymous.GET('/.well-known/openid-configuration'),
        200,
      );
      expect(body).toMatchObject({
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        subject_types_supported: ['public'],
      });
    });

    it('GET /.well-known/oauth-protected-resource/{path} describes each protected resource (RFC 9728)', async () => {
      const documents = [
        ['getOpenApiResourceMetadata', anonymous.GET('/.well-known/oauth-protected-resource/api/open'), '/api/open'],
        [
          'getWorkflowsResourceMetadata',
          anonymous.GET('/.well-known/oauth-protected-resource/api/workflows'),
          '/api/workflows',
        ],
        ['getMcpResourceMetadata', anonymous.GET('/.well-known/oauth-protected-resource/mcp'), '/mcp'],
      ] as const;
      for (const [operationId, call, path] of documents) {
        const { body } = await expectConformant(operationId, call, 200);
        expect((body as { resource: string }).resource.endsWith(path)).toBe(true);
      }
    });
  });

  describe('open interfaces', () => {
    it('GET /api/open/v1/userinfo answers the user, with sub (the id as a string) for OpenID Connect clients', async () => {
      const { body } = await expectConformant('getUserInfo', withOAuth.GET('/api/open/v1/userinfo'), 200);
      const user = body as { sub: string; id: number };
      expect(user.sub).toBe(String(user.id));
    });
    it('GET /api/open/v1/userinfo without a token is 401', async () => {
      await expectConformant('getUserInfo', anonymous.GET('/api/open/v1/userinfo'), 401);
    });
    it('GET /api/open/v1/orgs lists organizations', async () => {
      await expectConformant('listOrgs', withOAuth.GET('/api/open/v1/orgs'), 200);
    });
    it('GET /api/open/v1/{namespace}/tokens lists token metadata', async () => {
      const call = withOAuth.GET('/api/open/v1/{namespace}/tokens', {
        params: { path: { namespace: target.namespace } },
      });
      await expectConformant('listAccessTokens', call, 200);
    });
    it('GET /api/open/v1/{namespace}/tokens of a foreign namespace is 404', async () => {
      const call = withOAuth.GET('/api/open/v1/{namespace}/tokens', {
        params: { path: { namespace: 'someone-else-entirely' } },
        headers: { Prefer: 'code=404' },
      });
      await expectConformant('listAccessTokens', call, 404);
    });
    it('GET /api/open/v1/{namespace}/tokens/{id} issues a proxy token', async () => {
      const call = withOAuth.GET('/api/open/v1/{namespace}/tokens/{id}', {
        params: { path: { namespace: target.namespace, id: target.tokenId } },
      });
      const { body } = await expectConformant('getAccessToken', call, 200);
      expect((body as { proxy_access_token: string }).proxy_access_token.split('.')).toHaveLength(3);
    });
    it('GET /.well-known/jwks.json publishes the signing keys', async () => {
      await expectConformant('getJwks', anonymous.GET('/.well-known/jwks.json'), 200);
    });
    it('POST /serverless/v1/chat/completions answers with the echo model', async () => {
      const call = withKey.POST('/serverless/v1/chat/completions', {
        body: { model: 'echo', messages: [{ role: 'user', content: 'hello' }] },
      });
      await expectConformant('createChatCompletion', call, 200);
    });
    it('POST /serverless/v1/chat/completions without a token is 401 in the OpenAI error shape', async () => {
      const call = anonymous.POST('/serverless/v1/chat/completions', {
        body: { model: 'echo', messages: [{ role: 'user', content: 'hi' }] },
      });
      await expectConformant('createChatCompletion', call, 401);
    });
  });

  describe('workflows', () => {
    it('create, read, list, update, run, read the run, list runs, cancel, delete', async () => {
      const created = await expectConformant(
        'createWorkflow',
        withKey.POST('/api/workflows', { body: seedWorkflow }),
        201,
      );
      const id = (created.body as { data: { id: string } }).data.id;
      const path = { workflow_id: id };

      await expectConformant('getWorkflow', withKey.GET('/api/workflows/{workflow_id}', { params: { path } }), 200);
      await expectConformant(
        'listWorkflows',
        withKey.GET('/api/workflows', { params: { query: { page: 1, per_page: 20, search: 'Ticket' } } }),
        200,
      );
      await expectConformant(
        'updateWorkflow',
        withKey.PATCH('/api/workflows/{workflow_id}', {
          params: { path },
          body: { description: 'One line per ticket.' },
        }),
        200,
      );
      const run = await expectConformant(
        'runWorkflow',
        // Prism answers the lowest 2XX (200, the `Prefer: wait` answer) unless asked for another by
        // `Prefer: code=`; the service ignores that preference and answers 202 as without Prefer.
        withKey.POST('/api/workflows/{workflow_id}/run', {
          params: { path, header: { Prefer: 'code=202' } },
          body: { inputs: { ticket: 'The export button does nothing.' } },
        }),
        202,
      );
      const runPath = { workflow_id: id, run_id: (run.body as { data: { id: string } }).data.id };
      await expectConformant(
        'getRun',
        withKey.GET('/api/workflows/{workflow_id}/runs/{run_id}', { params: { path: runPath } }),
        200,
      );
      await expectConformant('listRuns', withKey.GET('/api/workflows/{workflow_id}/runs', { params: { path } }), 200);
      await expectConformant(
        'listRunSteps',
        withKey.GET('/api/workflows/{workflow_id}/runs/{run_id}/steps', { params: { path: runPath } }),
        200,
      );
      await expectConformant(
        'listRunEvents',
        withKey.GET('/api/workflows/{workflow_id}/runs/{run_id}/event-log', { params: { path: runPath } }),
        200,
      );
      // The event stream ends after run.finished (the mock serves its example at once).
      const events = await expectConformant(
        'streamRunEvents',
        withKey.GET('/api/workflows/{workflow_id}/runs/{run_id}/events', {
          params: { path: runPath },
          parseAs: 'text',
        }),
        200,
      );
      expect(String(events.body)).toMatch(/^id: 1\nevent: run\.status\n/);
      expect(String(events.body)).toMatch(/event: run\.finished\ndata: \{.*\}\n\n$/);
      // A run on `echo` may already have finished: cancelling it then is a 409.
      await expectConformant(
        'cancelRun',
        withKey.POST('/api/workflows/{workflow_id}/runs/{run_id}/cancel', { params: { path: runPath } }),
        [200, 409],
      );
      // Retried once cancelled (a resumed new run); one that completed first is a 409.
      await expectConformant(
        'retryRun',
        withKey.POST('/api/workflows/{workflow_id}/runs/{run_id}/retry', {
          params: { path: runPath, header: { Prefer: 'code=202' } },
          body: {},
        }),
        [202, 409],
      );
      const node = seedWorkflow.nodes.find((n) => n.type !== 'text_input' && n.type !== 'text_output')!;
      const feeding = seedWorkflow.edges.filter((e) => e.to === node.id).map((e) => e.from);
      await expectConformant(
        'testWorkflowNode',
        withKey.POST('/api/workflows/{workflow_id}/nodes/{node_id}/test', {
          params: { path: { workflow_id: id, node_id: node.id } },
          body: {
            inputs: { ticket: 'The export button does nothing.' },
            upstream: Object.fromEntries(feeding.map((from) => [from, 'The export button does nothing.'])),
          },
        }),
        200,
      );
      // The seed workflow has no approval node: its run never waits, so an answer is a 409.
      await expectConformant(
        'resumeRun',
        withKey.POST('/api/workflows/{workflow_id}/runs/{run_id}/resume', {
          params: { path: runPath },
          body: { answer: { approved: true } },
        }),
        [200, 409],
      );
      await expectConformant(
        'deleteWorkflow',
        withKey.DELETE('/api/workflows/{workflow_id}', { params: { path }, parseAs: 'text' }),
        204,
      );
    });

    it('trigger URLs: create (URL shown once), list, start a run through the URL without a key, rotate, revoke', async () => {
      const created = await expectConformant(
        'createWorkflow',
        withKey.POST('/api/workflows', { body: seedWorkflow }),
        201,
      );
      const path = { workflow_id: (created.body as { data: { id: string } }).data.id };
      const made = await expectConformant(
        'createTrigger',
        withKey.POST('/api/workflows/{workflow_id}/triggers', { params: { path }, body: { name: 'contract' } }),
        201,
      );
      const trigger = (made.body as { data: { id: string; url: string } }).data;
      const tokenOf = (url: string) => url.slice(url.indexOf('/hooks/') + '/hooks/'.length);
      await expectConformant(
        'listTriggers',
        withKey.GET('/api/workflows/{workflow_id}/triggers', { params: { path, query: { page: 1, per_page: 20 } } }),
        200,
      );
      const hook = (token: string, prefer: string) =>
        anonymous.POST('/hooks/{token}', {
          params: { path: { token }, header: { Prefer: prefer } },
          body: { ticket: 'The export button does nothing.' },
        });
      await expectConformant('runHook', hook(tokenOf(trigger.url), 'code=202'), 202);
      const triggerPath = { ...path, trigger_id: trigger.id };
      await expectConformant(
        'rotateTrigger',
        withKey.POST('/api/workflows/{workflow_id}/triggers/{trigger_id}/rotate', { params: { path: triggerPath } }),
        200,
      );
      await expectConformant('runHook', hook(tokenOf(trigger.url), 'code=404'), 404);
      await expectConformant(
        'updateTrigger',
        withKey.PATCH('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
          params: { path: triggerPath },
          body: { name: 'contract, renamed' },
        }),
        200,
      );
      await expectConformant(
        'deleteTrigger',
        withKey.DELETE('/api/workflows/{workflow_id}/triggers/{trigger_id}', {
          params: { path: triggerPath },
          parseAs: 'text',
        }),
        204,
      );
      await expectConformant(
        'deleteWorkflow',
        withKey.DELETE('/api/workflows/{workflow_id}', { params: { path }, parseAs: 'text' }),
        204,
      );
    });

    it('versions: list, read one, restore an old one as a new version; an unknown version is 404', async () => {
      const created = await expectConformant(
        'createWorkflow',
        withKey.POST('/api/workflows', { body: seedWorkflow }),
        201,
      );
      const path = { workflow_id: (created.body as { data: { id: string } }).data.id };
      await expectConformant(
        'updateWorkflow',
        withKey.PATCH('/api/workflows/{workflow_id}', { params: { path }, body: { description: 'Second version.' } }),
        200,
      );
      const list = await expectConformant(
        'listWorkflowVersions',
        withKey.GET('/api/workflows/{workflow_id}/versions', { params: { path, query: { page: 1, per_page: 20 } } }),
        200,
      );
      expect((list.body as { data: unknown[] }).data.length).toBeGreaterThan(0);
      const first = { ...path, version: 1 };
      await expectConformant(
        'getWorkflowVersion',
        withKey.GET('/api/workflows/{workflow_id}/versions/{version}', { params: { path: first } }),
        200,
      );
      await expectConformant(
        'restoreWorkflowVersion',
        withKey.POST('/api/workflows/{workflow_id}/versions/{version}/restore', { params: { path: first } }),
        201,
      );
      const unknown = withKey.GET('/api/workflows/{workflow_id}/versions/{version}', {
        params: { path: { ...path, version: 999 } },
        headers: { Prefer: 'code=404' },
      });
      await expectConformant('getWorkflowVersion', unknown, 404);
      await expectConformant(
        'deleteWorkflow',
        withKey.DELETE('/api/workflows/{workflow_id}', { params: { path }, parseAs: 'text' }),
        204,
      );
    });

    it('schedules: create, list, read, disable, delete; a cron that is not one is 400', async () => {
      const created = await expectConformant(
        'createWorkflow',
        withKey.POST('/api/workflows', { body: seedWorkflow }),
        201,
      );
      const path = { workflow_id: (created.body as { data: { id: string } }).data.id };
      const body = { cron: '0 8 * * 1-5', timezone: 'Europe/Berlin', inputs: { ticket: 'The nightly export failed.' } };
      const made = await expectConformant(
        'createSchedule',
        withKey.POST('/api/workflows/{workflow_id}/schedules', { params: { path }, body }),
        201,
      );
      const schedulePath = { ...path, schedule_id: (made.body as { data: { id: string } }).data.id };
      await expectConformant(
        'listSchedules',
        withKey.GET('/api/workflows/{workflow_id}/schedules', { params: { path, query: { page: 1, per_page: 20 } } }),
        200,
      );
      await expectConformant(
        'getSchedule',
        withKey.GET('/api/workflows/{workflow_id}/schedules/{schedule_id}', { params: { path: schedulePath } }),
        200,
      );
      await expectConformant(
        'updateSchedule',
        withKey.PATCH('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
          params: { path: schedulePath },
          body: { enabled: false },
        }),
        200,
      );
      const bad = withKey.POST('/api/workflows/{workflow_id}/schedules', {
        params: { path },
        body: { cron: 'every morning' },
        headers: { Prefer: 'code=400' },
      });
      await expectConformant('createSchedule', bad, 400);
      await expectConformant(
        'deleteSchedule',
        withKey.DELETE('/api/workflows/{workflow_id}/schedules/{schedule_id}', {
          params: { path: schedulePath },
          parseAs: 'text',
        }),
        204,
      );
      await expectConformant(
        'deleteWorkflow',
        withKey.DELETE('/api/workflows/{workflow_id}', { params: { path }, parseAs: 'text' }),
        204,
      );
    });

    it('callbacks: create (secret shown once), list, list attempts, enable, refuse a private address, delete', async () => {
      const created = await expectConformant(
        'createWorkflow',
        withKey.POST('/api/workflows', { body: seedWorkflow }),
        201,
      );
      const path = { workflow_id: (created.body as { data: { id: string } }).data.id };
      const made = await expectConformant(
        'createCallback',
        withKey.POST('/api/workflows/{workflow_id}/callbacks', {
          params: { path },
          body: { url: 'https://hooks.example.com/runs' },
        }),
        201,
      );
      const callbackPath = { ...path, callback_id: (made.body as { data: { id: string } }).data.id };
      await expectConformant(
        'listCallbacks',
        withKey.GET('/api/workflows/{workflow_id}/callbacks', { params: { path } }),
        200,
      );
      await expectConformant(
        'listCallbackAttempts',
        withKey.GET('/api/workflows/{workflow_id}/callbacks/{callback_id}/attempts', {
          params: { path: callbackPath },
        }),
        200,
      );
      const enabled = await expectConformant(
        'enableCallback',
        withKey.POST('/api/workflows/{workflow_id}/callbacks/{callback_id}/enable', { params: { path: callbackPath } }),
        200,
      );
      expect(enabled.body).toMatchObject({ data: { status: 'active' } });
      const refused = withKey.POST('/api/workflows/{workflow_id}/callbacks', {
        params: { path },
        body: { url: 'http://169.254.169.254/latest/meta-data/' },
        headers: { Prefer: 'code=400' },
      });
      await expectConformant('createCallback', refused, 400);
      await expectConformant(
        'deleteCallback',
        withKey.DELETE('/api/workflows/{workflow_id}/callbacks/{callback_id}', {
          params: { path: callbackPath },
          parseAs: 'text',
        }),
        204,
      );
      await expectConformant(
        'deleteWorkflow',
        withKey.DELETE('/api/workflows/{workflow_id}', { params: { path }, parseAs: 'text' }),
        204,
      );
    });

    it('GET /api/workflows without an API key is 401', async () => {
      await expectConformant('listWorkflows', anonymous.GET('/api/workflows'), 401);
    });
    it('GET /api/workflows/models lists the served models; without credentials it is 401', async () => {
      const { body } = await expectConformant('listWorkflowModels', withKey.GET('/api/workflows/models'), 200);
      expect((body as { data: { id: string }[] }).data.map((m) => m.id)).toContain('echo');
      await expectConformant('listWorkflowModels', anonymous.GET('/api/workflows/models'), 401);
    });
    // Prism checks only that a bearer token is there, so this is the live service's rule alone.
    it.skipIf(target.mock)(
      'POST /api/workflows with an OAuth access token (the wrong kind) is 401 invalid_token (RFC 6750 3.1)',
      async () => {
        const call = withOAuth.POST('/api/workflows', {
          body: { name: 'wrong kind', nodes: [], edges: [] },
        });
        const { response } = await expectConformant('createWorkflow', call, 401);
        expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
      },
    );
    // The reads take an OAuth access token of the workflows:read scope too (the live service's has it).
    it.skipIf(target.mock)('GET /api/workflows with an OAuth access token of workflows:read is 200', async () => {
      await expectConformant('listWorkflows', withOAuth.GET('/api/workflows'), 200);
    });
    it('POST /api/workflows with a body of the wrong types is 422 on the mock and the live service alike', async () => {
      const call = withKey.POST('/api/workflows', {
        body: { name: 42 as unknown as string, nodes: 'none' as unknown as [] },
      });
      const { body } = await expectConformant('createWorkflow', call, 422);
      expect((body as { errors: unknown[] }).errors.length).toBeGreaterThan(0);
    });
    it('GET /api/workflows with per_page over 100 is 400', async () => {
      await expectConformant(
        'listWorkflows',
        withKey.GET('/api/workflows', { params: { query: { per_page: 101 } } }),
        400,
      );
    });
    it('GET /api/workflows/{id} of an unknown workflow is 404', async () => {
      const call = withKey.GET('/api/workflows/{workflow_id}', {
        params: { path: { workflow_id: 'wf_doesnotexist' } },
        headers: { Prefer: 'code=404' },
      });
      await expectConformant('getWorkflow', call, 404);
    });
    it('POST /api/workflows with a cyclic graph is 422 listing the problem', async () => {
      const cyclic = { ...seedWorkflow, edges: [...seedWorkflow.edges, { from: 'result', to: 'summarise' }] };
      const call = withKey.POST('/api/workflows', { body: cyclic, headers: { Prefer: 'code=422' } });
      const { body } = await expectConformant('createWorkflow', call, 422);
      expect((body as { errors: unknown[] }).errors.length).toBeGreaterThan(0);
    });
  });

  describe('secrets', () => {
    it('put (create), put (replace), list without values, delete, delete again is 404', async () => {
      const path = { secret_name: 'CONTRACT_TOKEN' };
      await expectConformant(
        'putSecret',
        withKey.PUT('/api/secrets/{secret_name}', {
          params: { path },
          body: { value: 'ghp_contract' },
          headers: { Prefer: 'code=201' },
        }),
        201,
      );
      await expectConformant(
        'putSecret',
        withKey.PUT('/api/secrets/{secret_name}', { params: { path }, body: { value: 'ghp_contract2' } }),
        200,
      );
      const list = await expectConformant('listSecrets', withKey.GET('/api/secrets'), 200);
      expect(JSON.stringify(list.body)).not.toContain('ghp_contract');
      await expectConformant(
        'deleteSecret',
        withKey.DELETE('/api/secrets/{secret_name}', { params: { path }, parseAs: 'text' }),
        204,
      );
      await expectConformant(
        'deleteSecret',
        withKey.DELETE('/api/secrets/{secret_name}', { params: { path }, headers: { Prefer: 'code=404' } }),
        404,
      );
    });
  });

  describe('budgets', () => {
    // The live service runs without a price table unless its environment gives one: then a budget
    // cannot be set (409 prices_not_configured), and reading one answers a null limit.
    it("a workflow's and an API key's budget: read, put (200, or 409 without prices), delete; an unknown key is 404", async () => {
      const created = await expectConformant(
        'createWorkflow',
        withKey.POST('/api/workflows', { body: seedWorkflow }),
        201,
      );
      const path = { workflow_id: (created.body as { data: { id: string } }).data.id };
      const keyPath = { token_id: target.tokenId };
      const readWorkflow = () =>
        expectConformant(
          'getWorkflowBudget',
          withKey.GET('/api/workflows/{workflow_id}/budget', { params: { path } }),
          200,
        );
      await readWorkflow();
      const put = await expectConformant(
        'putWorkflowBudget',
        withKey.PUT('/api/workflows/{workflow_id}/budget', { params: { path }, body: { monthly_limit: 10 } }),
        [200, 409],
      );
      await readWorkflow();
      await expectConformant(
        'deleteWorkflowBudget',
        withKey.DELETE('/api/workflows/{workflow_id}/budget', { params: { path }, parseAs: 'text' }),
        204,
      );
      await expectConformant(
        'putApiKeyBudget',
        withKey.PUT('/api/access-tokens/{token_id}/budget', { params: { path: keyPath }, body: { monthly_limit: 5 } }),
        put.status,
      );
      await expectConformant(
        'getApiKeyBudget',
        withKey.GET('/api/access-tokens/{token_id}/budget', { params: { path: keyPath } }),
        200,
      );
      await expectConformant(
        'deleteApiKeyBudget',
        withKey.DELETE('/api/access-tokens/{token_id}/budget', { params: { path: keyPath }, parseAs: 'text' }),
        204,
      );
      await expectConformant(
        'getApiKeyBudget',
        withKey.GET('/api/access-tokens/{token_id}/budget', {
          params: { path: { token_id: 2147483647 } },
          headers: { Prefer: 'code=404' },
        }),
        404,
      );
    });
  });

  describe('named examples', () => {
    const examples = namedExamples();
    it('every documented response with a body has at least one named example, and each is valid', () => {
      for (const operationId of allOperationIds()) {
        const { operation } = findOperation(operationId);
        for (const [status, response] of Object.entries(operation.responses)) {
          const resolved = response.$ref ? spec.components.responses[response.$ref.split('/').pop()!]! : response;
          if (!resolved.content) continue;
          expect(
            examples.some((e) => e.operationId === operationId && e.status === status),
            `${operationId} ${status}`,
          ).toBe(true);
        }
      }
      for (const e of examples) {
        const value = e.mediaType === 'application/json' || e.mediaType.endsWith('+json') ? e.value : String(e.value);
        expect(
          conformanceProblems(e.operationId, Number(e.status), e.mediaType, value),
          `${e.operationId} ${e.status} ${e.name}`,
        ).toEqual([]);
      }
    });
    it('a run can be read in each state', () => {
      const names = examples.filter((e) => e.operationId === 'getRun' && e.status === '200').map((e) => e.name);
      expect(names.sort()).toEqual(['cancelled', 'completed', 'failed', 'queued', 'running']);
    });
    // QA asks the mock for one answer by name: `Prefer: code=200, example=failed`.
    it.runIf(target.mock)('the mock serves each named example when asked for it by name', async () => {
      for (const e of examples) {
        const request = exampleRequest(e.operationId);
        const response = await fetch(new URL(request.path, target.baseUrl), {
          method: request.method,
          redirect: 'manual',
          // Accept picks the media type where a response has more than one (a streamed 200).
          headers: { ...request.headers, Accept: e.mediaType, Prefer: `code=${e.status}, example=${e.name}` },
          body: request.body,
        });
        const text = await response.text();
        expect(response.status, `${e.operationId} ${e.name}: ${text.slice(0, 200)}`).toBe(Number(e.status));
        expect(e.mediaType.endsWith('json') ? JSON.parse(text) : text, `${e.operationId} ${e.name}`).toEqual(e.value);
      }
    });
  });

  it('covers every operation of openapi.yaml', () => {
    expect([...covered].sort()).toEqual(allOperationIds().sort());
  });
});
