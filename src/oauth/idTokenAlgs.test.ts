import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keyRing, rotateSigningKeys } from '../open/signingKeys.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { findAppByClientId, updateApp } from '../accounts/apps.ts';
import { testDialects } from '../../test/support/db.ts';
import { authorizeInBrowser, Browser, createFixture, logIn, type Fixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// Which key signs an ID token: RS256 for a client registered without
// id_token_signed_response_alg (OIDC Dynamic Client Registration's default, which Discovery
// requires an OP to offer), ES256 for one registered with ES256; proxy tokens ES256 whatever the
// client. A real HTTP server and database; the relying party is openid-client configured from the
// discovery document with its defaults, plus enableNonRepudiationChecks, with which it verifies
// each ID token's signature against the keys at jwks_uri (without it, it trusts TLS instead).

describe.each(testDialects())('ID token signing algorithms (%s)', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());

  /** openid-client as the app's relying party, registered with `metadata` (nothing: every default). */
  function relyingParty(f: Fixture, metadata: Partial<client.ClientMetadata> = {}): Promise<client.Configuration> {
    return client.discovery(
      new URL(server.baseUrl),
      f.clientId,
      { client_secret: f.clientSecret, ...metadata },
      undefined,
      {
        execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
      },
    );
  }

  /** The user signs in through the pages; the relying party runs the code flow (PKCE, state, nonce) and checks the ID token. */
  async function signIn(
    f: Fixture,
    config: client.Configuration,
  ): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: f.redirectUri,
      scope: 'openid user_info api_key',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
    });
    const callback = await authorizeInBrowser(browser, url);
    return client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      expectedState: state,
      idTokenExpected: true,
    });
  }

  const publishedKeys = async (): Promise<JSONWebKeySet> =>
    (await fetch(`${server.baseUrl}/.well-known/jwks.json`)).json() as Promise<JSONWebKeySet>;
  const keyOf = (jwks: JSONWebKeySet, token: string) =>
    jwks.keys.find((k) => k.kid === decodeProtectedHeader(token).kid);

  async function verify(token: string, f: Fixture, alg: string, jwks?: JSONWebKeySet): Promise<void> {
    await jwtVerify(token, createLocalJWKSet(jwks ?? (await publishedKeys())), {
      issuer: server.baseUrl,
      audience: f.clientId,
      algorithms: [alg],
    });
  }

  it('discovery lists RS256 first, then ES256 (OpenID Connect Discovery 1.0, 3)', async () => {
    const metadata = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256']);
  });

  it('signs the ID tokens of a client registered without id_token_signed_response_alg with RS256, which openid-client with its defaults verifies against the JWKS (code exchange and refresh)', async () => {
    const f = await createFixture(server.ctx.db);
    expect((await findAppByClientId(server.ctx, f.clientId))!.id_token_signed_response_alg).toBe('RS256');
    const config = await relyingParty(f);
    expect(config.clientMetadata().id_token_signed_response_alg).toBeUndefined();
    const tokens = await signIn(f, config);
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    expect(tokens.claims()).toMatchObject({ iss: server.baseUrl, aud: f.clientId, sub: String(f.userId) });
    const jwks = await publishedKeys();
    const key = keyOf(jwks, tokens.id_token!);
    expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
    expect(Buffer.from(key!.n!, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    await verify(tokens.id_token!, f, 'RS256', jwks);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(decodeProtectedHeader(refreshed.id_token!)).toMatchObject({ alg: 'RS256', kid: key!.kid });
    expect(refreshed.claims()).toMatchObject({ sub: String(f.userId), aud: f.clientId });
  });

  it('signs the ID tokens of a client registered with ES256 with an EC key, never the RSA key (code exchange and refresh)', async () => {
    const f = await createFixture(server.ctx.db, undefined, { idTokenAlg: 'ES256' });
    const config = await relyingParty(f, { id_token_signed_response_alg: 'ES256' });
    const tokens = await signIn(f, config);
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    const jwks = await publishedKeys();
    expect(keyOf(jwks, tokens.id_token!)).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    await verify(tokens.id_token!, f, 'ES256', jwks);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(decodeProtectedHeader(refreshed.id_token!)).toMatchObject({ alg: 'ES256' });
    await verify(refreshed.id_token!, f, 'ES256');

    // A relying party that expects the default refuses it: the algorithm is the client's registration, nothing else.
    const expectsRs256 = await relyingParty(f, { id_token_signed_response_alg: 'RS256' });
    const refused = await client.refreshTokenGrant(expectsRs256, refreshed.refresh_token!).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Error);
    expect(String((refused as Error & { cause?: unknown }).cause ?? refused)).toMatch(/alg/);
  });

  it("follows the app's setting from its next ID token on: an app switched to ES256 gets ES256 at its next refresh, and back", async () => {
    const f = await createFixture(server.ctx.db);
    const tokens = await signIn(f, await relyingParty(f));
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256');
    const app = (await findAppByClientId(server.ctx, f.clientId))!;
    await updateApp(server.ctx, f.userId, app.id, { idTokenAlg: 'ES256' });
    const switched = await client.refreshTokenGrant(
      await relyingParty(f, { id_token_signed_response_alg: 'ES256' }),
      tokens.refresh_token!,
    );
    expect(decodeProtectedHeader(switched.id_token!).alg).toBe('ES256');
    await updateApp(server.ctx, f.userId, app.id, { idTokenAlg: 'RS256' });
    const back = await client.refreshTokenGrant(await relyingParty(f), switched.refresh_token!);
    expect(decodeProtectedHeader(back.id_token!).alg).toBe('RS256');
  });

  it('keeps proxy tokens ES256, signed with an EC key, for RS256 and ES256 clients alike', async () => {
    for (const alg of ['RS256', 'ES256']) {
      const f = await createFixture(server.ctx.db, undefined, { idTokenAlg: alg });
      const { record } = await createAccessToken(server.ctx, {
        userId: f.userId,
        namespace: f.login,
        name: 'k',
        usageScenario: 'paid',
      });
      const tokens = await signIn(f, await relyingParty(f, { id_token_signed_response_alg: alg }));
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe(alg);
      const res = await fetch(`${server.baseUrl}/api/open/v1/${f.login}/tokens/${record.id}`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(res.status).toBe(200);
      const proxy = ((await res.json()) as { proxy_access_token: string }).proxy_access_token;
      expect(decodeProtectedHeader(proxy)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
      expect(keyOf(await publishedKeys(), proxy)).toMatchObject({ kty: 'EC', alg: 'ES256' });
    }
  });

  it('keeps publishing through a rotation: the new keys are published ahead of use, the retired ones while their tokens live', async () => {
    const rs = await createFixture(server.ctx.db);
    const es = await createFixture(server.ctx.db, undefined, { idTokenAlg: 'ES256' });
    const rsParty = await relyingParty(rs);
    const esParty = await relyingParty(es, { id_token_signed_response_alg: 'ES256' });
    const first = { rs: await signIn(rs, rsParty), es: await signIn(es, esParty) };
    const oldKid = {
      rs: decodeProtectedHeader(first.rs.id_token!).kid!,
      es: decodeProtectedHeader(first.es.id_token!).kid!,
    };

    const rotated = await rotateSigningKeys(server.ctx);
    const newKid = { rs: rotated.find((r) => r.alg === 'RS256')!.kid, es: rotated.find((r) => r.alg === 'ES256')!.kid };
    expect(rotated.find((r) => r.alg === 'RS256')!.retired).toEqual([oldKid.rs]);
    expect(rotated.find((r) => r.alg === 'ES256')!.retired).toEqual([oldKid.es]);
    // The key set as a relying party fetches and keeps it right after the rotation: the new keys are in it.
    const cached = await publishedKeys();
    expect(cached.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([newKid.rs, newKid.es, oldKid.rs, oldKid.es]));

    // Until active_from the old keys sign, so openid-client, whose key set is seconds old (it
    // refetches on an unknown kid only after 60 s), verifies every ID token it gets meanwhile.
    const meanwhile = {
      rs: await client.refreshTokenGrant(rsParty, first.rs.refresh_token!),
      es: await client.refreshTokenGrant(esParty, first.es.refresh_token!),
    };
    expect(decodeProtectedHeader(meanwhile.rs.id_token!)).toMatchObject({ alg: 'RS256', kid: oldKid.rs });
    expect(decodeProtectedHeader(meanwhile.es.id_token!)).toMatchObject({ alg: 'ES256', kid: oldKid.es });

    // From active_from on (each process within its key cache's minute) the new keys sign, and the key set kept before verifies them.
    vi.useFakeTimers({ toFake: ['Date'], now: rotated[0]!.activeFrom + 61_000 });
    try {
      const after = {
        rs: await client.refreshTokenGrant(rsParty, meanwhile.rs.refresh_token!),
        es: await client.refreshTokenGrant(esParty, meanwhile.es.refresh_token!),
      };
      expect(decodeProtectedHeader(after.rs.id_token!)).toMatchObject({ alg: 'RS256', kid: newKid.rs });
      expect(decodeProtectedHeader(after.es.id_token!)).toMatchObject({ alg: 'ES256', kid: newKid.es });
      for (const token of [first.rs.id_token!, after.rs.id_token!]) await verify(token, rs, 'RS256', cached);
      for (const token of [first.es.id_token!, after.es.id_token!]) await verify(token, es, 'ES256', cached);
      // The key set of later still publishes the retired keys: their ID tokens have not expired.
      const later = await publishedKeys();
      for (const token of [first.rs.id_token!, first.es.id_token!]) expect(keyOf(later, token)).toBeDefined();
    } finally {
      vi.useRealTimers();
      keyRing(server.ctx).forget(); // its caches were filled in the clock's future
    }
  });
});
