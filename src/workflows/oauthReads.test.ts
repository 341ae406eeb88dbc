// The workflows API's reads with an OAuth access token of the workflows:read scope, through a real
// HTTP server and store: the code flow as a third-party app runs it (oauth4webapi), DPoP-bound
// tokens with the library's own proofs and with hand-made ones for what no library sends.
import * as oauth from 'oauth4webapi';
import { exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { testDialects } from '../../test/support/db.ts';
import { dpopProof, type DpopKey } from '../../test/support/dpopProof.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  discover,
  insecure,
  logIn,
  obtainTokens,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

interface Answer {
  status: number;
  body: { code?: string; data?: unknown; meta?: unknown };
  challenge: string | null;
}

describe.each(testDialects())('workflows API reads with an OAuth access token (%s)', (dialect) => {
  let server: TestServer;
  let alice: Fixture;
  let aliceKey: string;
  let aliceWorkflows: string[];
  let bobsWorkflow: string;
  let readToken: string;

  async function apiKeyOf(f: Fixture): Promise<string> {
    const { token } = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'tests',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    return token;
  }

  async function send(path: string, authorization?: string, init: RequestInit = {}, proofs: string[] = []) {
    const headers = new Headers(init.headers);
    if (authorization) headers.set('authorization', authorization);
    for (const p of proofs) headers.append('dpop', p);
    const res = await fetch(`${server.baseUrl}${path}`, { ...init, headers });
    const text = await res.text();
    return {
      status: res.status,
      body: (text ? JSON.parse(text) : {}) as Answer['body'],
      challenge: res.headers.get('www-authenticate'),
    };
  }

  async function create(key: string, name: string): Promise<string> {
    const created = await send(`/api/workflows`, `Bearer ${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, ...seedGraph() }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return (created.body.data as { id: string }).id;
  }

  async function tokenOf(f: Fixture, scope: string): Promise<oauth.TokenEndpointResponse> {
    return (await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, scope)).tokens;
  }

  const idsOf = (answer: Answer) => (answer.body.data as { id: string }[]).map((w) => w.id);

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    alice = await createFixture(server.ctx.db);
    const bob = await createFixture(server.ctx.db);
    aliceKey = await apiKeyOf(alice);
    aliceWorkflows = [await create(aliceKey, 'Alice one'), await create(aliceKey, 'Alice two')];
    bobsWorkflow = await create(await apiKeyOf(bob), "Bob's");
    readToken = (await tokenOf(alice, 'workflows:read')).access_token;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists and reads its user's own workflows only; another user's id is the same 404 as for an API key", async () => {
    const list = await send('/api/workflows', `Bearer ${readToken}`);
    expect(list.status).toBe(200);
    expect(idsOf(list).sort()).toEqual([...aliceWorkflows].sort());
    expect(list.body.meta).toMatchObject({ total: 2 });

    const one = await send(`/api/workflows/${aliceWorkflows[0]}`, `Bearer ${readToken}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id: aliceWorkflows[0], name: 'Alice one' });

    const foreign = await send(`/api/workflows/${bobsWorkflow}`, `Bearer ${readToken}`);
    const foreignByKey = await send(`/api/workflows/${bobsWorkflow}`, `Bearer ${aliceKey}`);
    expect(foreign).toMatchObject({ status: 404, body: { code: 'workflow_not_found' } });
    const withoutRequestId = ({ request_id: _, ...rest }: Answer['body'] & { request_id?: string }) => rest;
    expect(withoutRequestId(foreign.body)).toEqual(withoutRequestId(foreignByKey.body));
    // A malformed id: whatever an API key gets, the token gets.
    const malformed = `/api/workflows/${'x'.repeat(300)}`;
    const byToken = await send(malformed, `Bearer ${readToken}`);
    const byKey = await send(malformed, `Bearer ${aliceKey}`);
    expect([byToken.status, byToken.body.code]).toEqual([byKey.status, byKey.body.code]);
    expect(byToken.status).toBeLessThan(500);
  });

  it('lists the served models with the token, and refuses a token without workflows:read', async () => {
    const models = await send('/api/workflows/models', `Bearer ${readToken}`);
    expect(models.status).toBe(200);
    expect((models.body.data as { id: string }[]).map((m) => m.id)).toContain('echo');
    const profileOnly = (await tokenOf(alice, 'user_info')).access_token;
    const narrow = await send('/api/workflows/models', `Bearer ${profileOnly}`);
    expect(narrow).toMatchObject({ status: 403, body: { code: 'insufficient_scope' } });
    expect(narrow.challenge).toMatch(/scope="workflows:read"/);
  });

  it('writes and runs stay with API keys: the token is the wrong kind there', async () => {
    const cases: Array<[string, RequestInit]> = [
      ['/api/workflows', { method: 'POST', body: JSON.stringify({ name: 'x', ...seedGraph() }) }],
      [`/api/workflows/${aliceWorkflows[0]}`, { method: 'PATCH', body: JSON.stringify({ name: 'y' }) }],
      [`/api/workflows/${aliceWorkflows[0]}`, { method: 'DELETE' }],
      [`/api/workflows/${aliceWorkflows[0]}/run`, { method: 'POST', body: JSON.stringify({ inputs: {} }) }],
      [`/api/workflows/${aliceWorkflows[0]}/runs`, {}],
    ];
    for (const [path, init] of cases) {
      const answer = await send(path, `Bearer ${readToken}`, {
        ...init,
        headers: init.body ? { 'content-type': 'application/json' } : {},
      });
      expect(answer, `${init.method ?? 'GET'} ${path}`).toMatchObject({
        status: 401,
        body: { code: 'wrong_token_kind' },
      });
    }
    expect((await send('/api/workflows', `Bearer ${aliceKey}`)).status).toBe(200);
  });

  it('refuses a token without the scope (403 insufficient_scope), an unknown one, and a revoked one', async () => {
    const profileOnly = (await tokenOf(alice, 'user_info')).access_token;
    const narrow = await send('/api/workflows', `Bearer ${profileOnly}`);
    expect(narrow).toMatchObject({ status: 403, body: { code: 'insufficient_scope' } });
    expect(narrow.challenge).toMatch(/error="insufficient_scope", scope="workflows:read"/);
    expect(await send(`/api/workflows/${aliceWorkflows[0]}`, `Bearer ${profileOnly}`)).toMatchObject({ status: 403 });

    const unknown = await send('/api/workflows', 'Bearer gho_not_a_token');
    expect(unknown).toMatchObject({ status: 401, body: { code: 'invalid_access_token' } });
    expect(unknown.challenge).toMatch(/^Bearer realm="api", error="invalid_token"/);

    const tokens = await tokenOf(alice, 'workflows:read');
    expect((await send('/api/workflows', `Bearer ${tokens.access_token}`)).status).toBe(200);
    const as = await discover(server.baseUrl);
    const revoked = await oauth.revocationRequest(
      as,
      { client_id: alice.clientId },
      oauth.ClientSecretBasic(alice.clientSecret),
      tokens.access_token,
      insecure,
    );
    expect(revoked.status).toBe(200);
    expect(await send('/api/workflows', `Bearer ${tokens.access_token}`)).toMatchObject({
      status: 401,
      body: { code: 'invalid_access_token' },
    });
  });

  it('keeps the API-key answers: none, an unknown key', async () => {
    expect(await send('/api/workflows')).toMatchObject({ status: 401, body: { code: 'missing_credentials' } });
    const unknownKey = aliceKey.slice(0, -4) + (aliceKey.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(await send('/api/workflows', `Bearer ${unknownKey}`)).toMatchObject({
      status: 401,
      body: { code: 'invalid_api_key' },
    });
  });

  describe('a DPoP-bound token', () => {
    let key: DpopKey;
    let handle: oauth.DPoPHandle;
    let accessToken: string;
    const htu = (path = '/api/workflows') => `${server.baseUrl}${path}`;

    beforeAll(async () => {
      const pair = await oauth.generateKeyPair('ES256', { extractable: true });
      key = { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.publicKey), alg: 'ES256' };
      const as = await discover(server.baseUrl);
      const client: oauth.Client = { client_id: alice.clientId };
      handle = oauth.DPoP(client, pair);
      const browser = new Browser(server.baseUrl);
      expect((await logIn(browser, alice.login, alice.password)).status).toBe(303);
      const state = oauth.generateRandomState();
      const verifier = oauth.generateRandomCodeVerifier();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: alice.clientId,
        redirect_uri: alice.redirectUri,
        scope: 'workflows:read',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      const params = oauth.validateAuthResponse(as, client, await authorizeInBrowser(browser, url), state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(alice.clientSecret),
        params,
        alice.redirectUri,
        verifier,
        { DPoP: handle, ...insecure },
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      expect(tokens.token_type).toBe('dpop');
      accessToken = tokens.access_token;
    });

    it('is served as Authorization: DPoP with a proof of its key (the library, and by hand)', async () => {
      const res = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(htu()), undefined, undefined, {
        DPoP: handle,
        ...insecure,
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { id: string }[] }).data.map((w) => w.id).sort()).toEqual(
        [...aliceWorkflows].sort(),
      );
      const path = `/api/workflows/${aliceWorkflows[1]}`;
      const one = await send(path, `DPoP ${accessToken}`, {}, [await dpopProof(key, { htu: htu(path), accessToken })]);
      expect(one).toMatchObject({ status: 200, body: { data: { id: aliceWorkflows[1] } } });
    });

    it('is refused as Bearer with the DPoP challenge, and without a valid proof of its key', async () => {
      const asBearer = await send('/api/workflows', `Bearer ${accessToken}`);
      expect(asBearer).toMatchObject({ status: 401, body: { code: 'invalid_access_token' } });
      expect(asBearer.challenge).toMatch(/^DPoP error="invalid_token", .*algs="ES256 EdDSA RS256 PS256"/);
      const bearerWithProof = await send('/api/workflows', `Bearer ${accessToken}`, {}, [
        await dpopProof(key, { htu: htu(), accessToken }),
      ]);
      expect(bearerWithProof).toMatchObject({ status: 401, body: { code: 'invalid_access_token' } });

      const other: DpopKey = await (async () => {
        const pair = await oauth.generateKeyPair('ES256', { extractable: true });
        return { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.publicKey), alg: 'ES256' };
      })();
      const replayed = await dpopProof(key, { htu: htu(), accessToken });
      expect((await send('/api/workflows', `DPoP ${accessToken}`, {}, [replayed])).status).toBe(200);
      const cases: Array<[string[], string]> = [
        [[], 'invalid_dpop_proof'],
        [[await dpopProof(other, { htu: htu(), accessToken })], 'invalid_access_token'],
        [[await dpopProof(key, { htu: htu(), accessToken: 'gho_someoneElse' })], 'invalid_dpop_proof'],
        [
          [await dpopProof(key, { htu: htu(`/api/workflows/${aliceWorkflows[0]}`), accessToken })],
          'invalid_dpop_proof',
        ],
        [[replayed], 'invalid_dpop_proof'],
        [['x'.repeat(5000)], 'invalid_dpop_proof'],
      ];
      for (const [proofs, code] of cases) {
        const answer = await send('/api/workflows', `DPoP ${accessToken}`, {}, proofs);
        expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 401, body: { code } });
        expect(answer.challenge).toMatch(/^DPoP error=/);
      }
    });
  });
});
