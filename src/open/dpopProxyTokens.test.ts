import { calculateJwkThumbprint, decodeJwt } from 'jose';
import type * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { dpopBoundRefresh, dpopKey, dpopProof, type DpopKey } from '../../test/support/dpopProof.ts';
import { createFixture, discover, obtainTokens, type Fixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';

// DPoP (RFC 9449) carried from an OAuth access token to the proxy tokens minted from it, through a
// real server on each store: token detail and token exchange mint a proxy token bound to the same
// key (`cnf.jkt`, RFC 9449 6.1) from a bound access token, and the gateway takes it only with the
// DPoP scheme and a proof of that key; proxy tokens of unbound access tokens work as before.

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const GATEWAY_PATH = '/serverless/v1/chat/completions';

describe.each(testDialects())('DPoP-bound proxy tokens at the gateway (%s)', (dialect) => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    as = await discover(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A user with an app, a namespace token, an unbound access token and one bound to `key`. */
  async function setUp(key: DpopKey) {
    const f = await createFixture(server.ctx.db);
    const raw = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'Production key',
      usageScenario: 'paid',
    });
    const { tokens } = await obtainTokens(server.baseUrl, as, f, 'user_info api_key');
    const bound = await dpopBoundRefresh(server.baseUrl, f, tokens.refresh_token!, key);
    expect(bound.token_type).toBe('DPoP');
    return { f, id: raw.record.id, unbound: tokens.access_token, bound: bound.access_token };
  }

  const detailUrl = (namespace: string, id: number) => `${server.baseUrl}/api/open/v1/${namespace}/tokens/${id}`;

  /** Token detail with a bound access token (its proof) or an unbound one (Bearer). */
  async function detail(f: Fixture, id: number, accessToken: string, key?: DpopKey): Promise<string> {
    const url = detailUrl(f.login, id);
    const headers: Record<string, string> = key
      ? {
          authorization: `DPoP ${accessToken}`,
          dpop: await dpopProof(key, { htm: 'GET', htu: url, accessToken }),
        }
      : { authorization: `Bearer ${accessToken}` };
    const res = await fetch(url, { headers });
    expect(res.status).toBe(200);
    return ((await res.json()) as { proxy_access_token: string }).proxy_access_token;
  }

  async function exchange(f: Fixture, subjectToken: string, resource: string) {
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: EXCHANGE,
        client_id: f.clientId,
        client_secret: f.clientSecret,
        subject_token: subjectToken,
        subject_token_type: ACCESS,
        resource,
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { access_token: string; token_type: string };
  }

  /** A gateway call with these headers; its status, challenge and OpenAI error code. */
  async function chat(headers: Record<string, string>) {
    const res = await fetch(`${server.baseUrl}${GATEWAY_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hello bound' }] }),
    });
    const body = (await res.json()) as { error?: { code: string | null }; choices?: unknown[] };
    return { status: res.status, challenge: res.headers.get('www-authenticate'), body };
  }

  const proofFor = (key: DpopKey, token: string, more: { htu?: string; htm?: string } = {}) =>
    dpopProof(key, {
      htm: more.htm ?? 'POST',
      htu: more.htu ?? `${server.baseUrl}${GATEWAY_PATH}`,
      accessToken: token,
    });

  it('token detail binds the proxy token of a bound access token to its key; the gateway takes it with a proof only', async () => {
    const key = await dpopKey();
    const { f, id, bound } = await setUp(key);
    const proxy = await detail(f, id, bound, key);
    expect(decodeJwt(proxy).cnf).toEqual({ jkt: await calculateJwkThumbprint(key.publicJwk, 'sha256') });

    const ok = await chat({ authorization: `DPoP ${proxy}`, dpop: await proofFor(key, proxy) });
    expect(ok.status).toBe(200);
    expect(ok.body.choices).toHaveLength(1);
    // A fresh proof for every call.
    expect((await chat({ authorization: `DPoP ${proxy}`, dpop: await proofFor(key, proxy) })).status).toBe(200);

    const boundChallenge = /^DPoP error="invalid_token", .*algs="ES256 EdDSA RS256 PS256"$/;
    const unproven: Record<string, string>[] = [
      { authorization: `Bearer ${proxy}` },
      { authorization: `Bearer ${proxy}`, dpop: await proofFor(key, proxy) },
    ];
    for (const headers of unproven) {
      const refused = await chat(headers);
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatch(boundChallenge);
      expect(refused.body.error?.code).toBe('invalid_api_key');
    }
    const thief = await dpopKey();
    const foreign = await chat({ authorization: `DPoP ${proxy}`, dpop: await proofFor(thief, proxy) });
    expect(foreign.status).toBe(401);
    expect(foreign.challenge).toMatch(boundChallenge);
  });

  it('refuses a missing, malformed, replayed, misdirected or unrelated proof with a DPoP invalid_dpop_proof challenge', async () => {
    const key = await dpopKey();
    const { f, id, bound } = await setUp(key);
    const proxy = await detail(f, id, bound, key);
    const proof = await proofFor(key, proxy);
    expect((await chat({ authorization: `DPoP ${proxy}`, dpop: proof })).status).toBe(200);
    const cases: Record<string, Record<string, string>> = {
      'no proof': { authorization: `DPoP ${proxy}` },
      'not a JWT': { authorization: `DPoP ${proxy}`, dpop: 'not-a-proof' },
      replayed: { authorization: `DPoP ${proxy}`, dpop: proof },
      'another URL': {
        authorization: `DPoP ${proxy}`,
        dpop: await proofFor(key, proxy, { htu: `${server.baseUrl}/api/open/oauth/userinfo` }),
      },
      'another method': { authorization: `DPoP ${proxy}`, dpop: await proofFor(key, proxy, { htm: 'GET' }) },
      'the access token, not the proxy token, as ath': {
        authorization: `DPoP ${proxy}`,
        dpop: await proofFor(key, bound),
      },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const refused = await chat(headers);
      expect(refused.status, name).toBe(401);
      expect(refused.challenge, name).toMatch(/^DPoP error="invalid_dpop_proof", .*algs="/);
      expect(refused.body.error?.code, name).toBe('invalid_api_key');
    }
  });

  it('token exchange of a bound subject token answers token_type DPoP and a proxy token bound to its key', async () => {
    const key = await dpopKey();
    const { f, id, bound, unbound } = await setUp(key);
    const exchanged = await exchange(f, bound, detailUrl(f.login, id));
    expect(exchanged.token_type).toBe('DPoP');
    const proxy = exchanged.access_token;
    expect(decodeJwt(proxy).cnf).toEqual({ jkt: await calculateJwkThumbprint(key.publicJwk, 'sha256') });
    expect((await chat({ authorization: `Bearer ${proxy}` })).status).toBe(401);
    expect((await chat({ authorization: `DPoP ${proxy}`, dpop: await proofFor(key, proxy) })).status).toBe(200);

    // An unbound subject token: a bearer proxy token, as before.
    const plain = await exchange(f, unbound, detailUrl(f.login, id));
    expect(plain.token_type).toBe('Bearer');
    expect(decodeJwt(plain.access_token).cnf).toBeUndefined();
  });

  it('leaves proxy tokens of unbound access tokens as they were: Bearer works, and DPoP with a valid proof too', async () => {
    const key = await dpopKey();
    const { f, id, unbound } = await setUp(key);
    const proxy = await detail(f, id, unbound);
    expect(decodeJwt(proxy).cnf).toBeUndefined();
    expect((await chat({ authorization: `Bearer ${proxy}` })).status).toBe(200);
    expect((await chat({ authorization: `DPoP ${proxy}`, dpop: await proofFor(key, proxy) })).status).toBe(200);
    // The DPoP scheme still needs a valid proof.
    expect((await chat({ authorization: `DPoP ${proxy}` })).status).toBe(401);
    // An API key is not a proxy token, whatever its scheme.
    expect((await chat({ authorization: 'DPoP sk_not-a-proxy-token' })).status).toBe(401);
  });
});
