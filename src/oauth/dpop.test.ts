// DPoP (RFC 9449) through the real code flow, with a DPoP-capable relying-party library
// (oauth4webapi: its own proofs, its own nonce handling) and with hand-made proofs for what no
// library sends: replays (also to a second app instance on the same store), wrong keys, wrong
// ath, bound tokens as Bearer.
import * as oauth from 'oauth4webapi';
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { dpopKey, dpopProof, type DpopKey } from '../../test/support/dpopProof.ts';
import {
  authorizeInBrowser,
  Browser,
  createFixture,
  discover,
  insecure,
  logIn,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { hashToken } from '../shared/crypto.ts';

/** Every DPoP header oauth4webapi sent, to replay one by hand. */
const sentProofs: string[] = [];
const recording = {
  ...insecure,
  [oauth.customFetch]: (url: string, init: { headers: Record<string, string> }) => {
    const proof = new Headers(init.headers).get('dpop');
    if (proof) sentProofs.push(proof);
    return fetch(url, init as RequestInit);
  },
};

/** How many times the server asked oauth4webapi for a nonce. */
let nonceRetries = 0;

/** Runs `call` again once when the server asks for a nonce (RFC 9449 8, 9): the handle has cached it. */
async function withNonceRetry<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!oauth.isDPoPNonceError(err)) throw err;
    nonceRetries += 1;
    return call();
  }
}

interface Client {
  f: Fixture;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  DPoP: oauth.DPoPHandle;
}

async function libraryClient(server: TestServer): Promise<Client> {
  const f = await createFixture(server.ctx.db);
  const client: oauth.Client = { client_id: f.clientId };
  return {
    f,
    as: await discover(server.baseUrl),
    client,
    auth: oauth.ClientSecretBasic(f.clientSecret),
    DPoP: oauth.DPoP(client, await oauth.generateKeyPair('ES256')),
  };
}

/** The code flow as the app runs it with oauth4webapi, DPoP on the code exchange. */
async function codeFlow(server: TestServer, c: Client): Promise<oauth.TokenEndpointResponse> {
  const browser = new Browser(server.baseUrl);
  expect((await logIn(browser, c.f.login, c.f.password)).status).toBe(303);
  const state = oauth.generateRandomState();
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(c.as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: c.f.clientId,
    redirect_uri: c.f.redirectUri,
    scope: 'user_info',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  const params = oauth.validateAuthResponse(c.as, c.client, await authorizeInBrowser(browser, url), state);
  return withNonceRetry(async () =>
    oauth.processAuthorizationCodeResponse(
      c.as,
      c.client,
      await oauth.authorizationCodeGrantRequest(c.as, c.client, c.auth, params, c.f.redirectUri, verifier, {
        DPoP: c.DPoP,
        ...recording,
      }),
    ),
  );
}

async function libraryUserinfo(server: TestServer, c: Client, accessToken: string) {
  return withNonceRetry(async () => {
    const res = await oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL(`${server.baseUrl}/api/open/v1/userinfo`),
      undefined,
      undefined,
      { DPoP: c.DPoP, ...recording },
    );
    return { status: res.status, body: (await res.json()) as { login?: string } };
  });
}

async function libraryRefresh(c: Client, refreshToken: string): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(async () =>
    oauth.processRefreshTokenResponse(
      c.as,
      c.client,
      await oauth.refreshTokenGrantRequest(c.as, c.client, c.auth, refreshToken, { DPoP: c.DPoP, ...recording }),
    ),
  );
}

/** GET user info with this Authorization header and DPoP proofs. */
async function userinfo(server: TestServer, authorization: string, proofs: string[] = []) {
  const headers = new Headers({ authorization });
  for (const p of proofs) headers.append('dpop', p);
  const res = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers });
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate') ?? '',
    nonce: res.headers.get('dpop-nonce'),
    body: (await res.json()) as { code?: string; login?: string },
  };
}

const boundJkt = async (server: TestServer, accessToken: string) =>
  (
    (await server.ctx
      .db('oauth_tokens')
      .where({ access_token_hash: hashToken(accessToken) })
      .first('dpop_jkt')) as {
      dpop_jkt: string | null;
    }
  ).dpop_jkt;

describe.each(testDialects())('DPoP on %s', (dialect) => {
  let server: TestServer;
  let second: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
    // A second app instance on the same store: a proof used at one is refused at the other.
    second = await startTestServer({ databaseUrl: server.databaseUrl });
  });
  afterAll(async () => {
    await second?.close();
    await server?.close();
  });

  it('oauth4webapi: the code exchange binds the token to its key; user info with a proof; a refresh; a replayed proof refused', async () => {
    const c = await libraryClient(server);
    const tokens = await codeFlow(server, c);
    expect(tokens.token_type).toBe('dpop');
    expect(await boundJkt(server, tokens.access_token)).toBe(await c.DPoP.calculateThumbprint());

    const info = await libraryUserinfo(server, c, tokens.access_token);
    expect(info).toMatchObject({ status: 200, body: { login: c.f.login } });

    // A replay of the proof the library just sent, here and at the other instance.
    const replayed = sentProofs.at(-1)!;
    for (const s of [server, second]) {
      const replay = await userinfo(s, `DPoP ${tokens.access_token}`, [replayed]);
      expect(replay).toMatchObject({ status: 401, body: { code: 'invalid_dpop_proof' } });
      expect(replay.challenge).toMatch(/^DPoP error="invalid_dpop_proof"/);
    }

    const refreshed = await libraryRefresh(c, tokens.refresh_token!);
    expect(refreshed.token_type).toBe('dpop');
    expect(await boundJkt(server, refreshed.access_token)).toBe(await c.DPoP.calculateThumbprint());
    expect((await libraryUserinfo(server, c, refreshed.access_token)).status).toBe(200);
  });

  describe('a bound token at a resource', () => {
    let key: DpopKey;
    let accessToken: string;
    const htu = () => `${server.baseUrl}/api/open/v1/userinfo`;
    beforeAll(async () => {
      const c = await libraryClient(server);
      accessToken = (await codeFlow(server, c)).access_token;
      // The same key as the library's, to sign proofs by hand.
      key = await dpopKey();
      const jkt = await calculateJwkThumbprint(key.publicJwk, 'sha256');
      await server.ctx
        .db('oauth_tokens')
        .where({ access_token_hash: hashToken(accessToken) })
        .update({ dpop_jkt: jkt });
    });

    it('is served with a proof of its key, and refused as Bearer (RFC 9449 7.1)', async () => {
      const ok = await userinfo(server, `DPoP ${accessToken}`, [await dpopProof(key, { htu: htu(), accessToken })]);
      expect(ok.status).toBe(200);
      const asBearer = await userinfo(server, `Bearer ${accessToken}`);
      expect(asBearer).toMatchObject({ status: 401, body: { code: 'invalid_access_token' } });
      expect(asBearer.challenge).toMatch(/^DPoP error="invalid_token", .*algs="ES256 EdDSA RS256 PS256"/);
      // A proof beside it does not make Bearer acceptable.
      const bearerWithProof = await userinfo(server, `Bearer ${accessToken}`, [
        await dpopProof(key, { htu: htu(), accessToken }),
      ]);
      expect(bearerWithProof.status).toBe(401);
    });

    it('refuses no proof, another key, a wrong ath, method or URL, a stale iat, two headers, an oversized one', async () => {
      const other = await dpopKey();
      const stale = Math.floor(Date.now() / 1000) - 300;
      const cases: Array<[string[], string]> = [
        [[], 'invalid_dpop_proof'],
        [[await dpopProof(other, { htu: htu(), accessToken })], 'invalid_access_token'],
        [[await dpopProof(key, { htu: htu(), accessToken: 'gho_someoneElse' })], 'invalid_dpop_proof'],
        [[await dpopProof(key, { htu: htu(), accessToken, htm: 'POST' })], 'invalid_dpop_proof'],
        [[await dpopProof(key, { htu: `${server.baseUrl}/api/open/v1/orgs`, accessToken })], 'invalid_dpop_proof'],
        [[await dpopProof(key, { htu: htu(), accessToken, iat: stale })], 'invalid_dpop_proof'],
        [
          [await dpopProof(key, { htu: htu(), accessToken }), await dpopProof(key, { htu: htu(), accessToken })],
          'invalid_dpop_proof',
        ],
        [['x'.repeat(5000)], 'invalid_dpop_proof'],
      ];
      for (const [proofs, code] of cases) {
        const answer = await userinfo(server, `DPoP ${accessToken}`, proofs);
        expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 401, body: { code } });
        expect(answer.challenge).toMatch(/^DPoP error=/);
      }
    });
  });

  it('an unbound token: Bearer as today; with the DPoP scheme and a valid proof, accepted (as node-oidc-provider)', async () => {
    const c = await libraryClient(server);
    const { as, f } = c;
    const browser = new Browser(server.baseUrl);
    await logIn(browser, f.login, f.password);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const params = oauth.validateAuthResponse(
      as,
      c.client,
      await authorizeInBrowser(browser, url),
      oauth.skipStateCheck,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      c.client,
      await oauth.authorizationCodeGrantRequest(as, c.client, c.auth, params, f.redirectUri, verifier, insecure),
    );
    expect(tokens.token_type).toBe('bearer');
    expect(await boundJkt(server, tokens.access_token)).toBeNull();
    expect((await userinfo(server, `Bearer ${tokens.access_token}`)).status).toBe(200);
    const key = await dpopKey('EdDSA');
    const proof = await dpopProof(key, {
      htu: `${server.baseUrl}/api/open/v1/userinfo`,
      accessToken: tokens.access_token,
    });
    expect((await userinfo(server, `DPoP ${tokens.access_token}`, [proof])).status).toBe(200);
    // The DPoP scheme without a proof is refused.
    expect((await userinfo(server, `DPoP ${tokens.access_token}`)).body.code).toBe('invalid_dpop_proof');
    // A confidential client's refresh with a proof: the new access token is bound to that key.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      c.client,
      await oauth.refreshTokenGrantRequest(as, c.client, c.auth, tokens.refresh_token!, { DPoP: c.DPoP, ...insecure }),
    );
    expect(refreshed.token_type).toBe('dpop');
    expect(await boundJkt(server, refreshed.access_token)).toBe(await c.DPoP.calculateThumbprint());
  });

  it('the token endpoint refuses a bad proof with 400 invalid_dpop_proof, and issues nothing', async () => {
    const c = await libraryClient(server);
    const tokens = await codeFlow(server, c);
    const key = await dpopKey();
    const tokenUrl = `${server.baseUrl}/api/open/oauth/token`;
    const refresh = (proof: string) =>
      fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token!,
          client_id: c.f.clientId,
          client_secret: c.f.clientSecret,
        }),
      });
    for (const proof of [
      await dpopProof(key, { htu: `${server.baseUrl}/api/open/v1/userinfo`, htm: 'POST' }),
      await dpopProof(key, { htu: tokenUrl, htm: 'GET' }),
      await dpopProof(await dpopKey('ES384'), { htu: tokenUrl, htm: 'POST' }),
      'not.a.proof',
    ]) {
      const res = await refresh(proof);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_dpop_proof' });
    }
    // The refresh token was not used: a good proof refreshes it, once; the same proof again is a replay.
    const good = await dpopProof(key, { htu: tokenUrl, htm: 'POST' });
    const res = await refresh(good);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ token_type: 'DPoP' });
    expect((await (await refresh(good)).json()) as object).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('a refresh retried within the grace window gets the same pair, still DPoP; a refresh without a proof gets a Bearer token', async () => {
    const c = await libraryClient(server);
    const tokens = await codeFlow(server, c);
    const first = await libraryRefresh(c, tokens.refresh_token!);
    const retry = await libraryRefresh(c, tokens.refresh_token!);
    expect(retry).toMatchObject({ access_token: first.access_token, token_type: 'dpop' });
    const plain = await oauth.processRefreshTokenResponse(
      c.as,
      c.client,
      await oauth.refreshTokenGrantRequest(c.as, c.client, c.auth, first.refresh_token!, insecure),
    );
    expect(plain.token_type).toBe('bearer');
    expect(await boundJkt(server, plain.access_token)).toBeNull();
  });

  it('both metadata documents publish dpop_signing_alg_values_supported', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const body = (await (await fetch(server.baseUrl + path)).json()) as Record<string, unknown>;
      expect(body.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'RS256', 'PS256']);
    }
  });
});

describe.each(testDialects())('DPoP with server nonces required (DPOP_REQUIRE_NONCE) on %s', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect, env: { DPOP_REQUIRE_NONCE: 'true' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('oauth4webapi is asked for a nonce (use_dpop_nonce) at the code exchange, retries with it, then signs with the nonces the answers carry', async () => {
    const c = await libraryClient(server);
    const before = nonceRetries;
    const tokens = await codeFlow(server, c);
    expect(tokens.token_type).toBe('dpop');
    // Asked once, at the code exchange; the answers carry the next nonce, which the handle keeps.
    expect(nonceRetries - before).toBe(1);
    const refreshed = await libraryRefresh(c, tokens.refresh_token!);
    const info = await libraryUserinfo(server, c, refreshed.access_token);
    expect(info.status).toBe(200);
    expect(nonceRetries - before).toBeGreaterThanOrEqual(1);
  });

  it('a proof without a nonce, or with a forged one, is answered use_dpop_nonce with a fresh DPoP-Nonce (400 at the token endpoint, 401 at resources)', async () => {
    const key = await dpopKey();
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await dpopProof(key, { htu: `${server.baseUrl}/api/open/oauth/token`, htm: 'POST' }),
      },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'ghr_x',
        client_id: 'x',
        client_secret: 'y',
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = res.headers.get('dpop-nonce');
    expect(nonce).toBeTruthy();

    // A bound token (the library's key); proofs of another key without or with a forged nonce:
    // the nonce is asked for first.
    const c = await libraryClient(server);
    const tokens = await withNonceRetry(() => codeFlow(server, c));
    const htu = `${server.baseUrl}/api/open/v1/userinfo`;
    for (const extra of [{}, { nonce: 'forged' }, { nonce: nonce! + 'x' }]) {
      const answer = await userinfo(server, `DPoP ${tokens.access_token}`, [
        await dpopProof(key, { htu, accessToken: tokens.access_token, ...extra }),
      ]);
      expect(answer).toMatchObject({ status: 401, body: { code: 'use_dpop_nonce' } });
      expect(answer.nonce).toBeTruthy();
      expect(answer.challenge).toMatch(/^DPoP error="use_dpop_nonce"/);
    }
  });
});
