import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveService, type LiveService } from '../../contract-tests/liveService.ts';
import { Browser, formFields } from '../support/oauthFlow.ts';

// Two OpenID Connect clients nobody here wrote, with their defaults, sign a user in to the live
// service (`src/main.ts` as a process, on a fresh embedded PostgreSQL): openid-client (npm) and
// authlib's Flask client (PyPI, in .venv by scripts/authlib.sh). Each discovers the provider from
// /.well-known/openid-configuration, and the user answers the real login and consent pages over HTTP.

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The user's browser from the authorization URL to the client's callback: login, then consent. */
async function signIn(browser: Browser, authorizationUrl: URL, login: string, password: string): Promise<URL> {
  const toLogin = await browser.fetch(authorizationUrl.toString());
  expect(toLogin.status).toBe(302);
  const loginPage = await browser.fetch(toLogin.headers.get('location')!);
  expect(loginPage.status).toBe(200);
  const loggedIn = await browser.post('/login', { ...formFields(await loginPage.text()), login, password });
  expect(loggedIn.status).toBe(303);
  const consent = await browser.fetch(loggedIn.headers.get('location')!);
  expect(consent.status).toBe(200);
  const allowed = await browser.post('/oauth/authorize/decision', {
    ...formFields(await consent.text()),
    decision: 'allow',
  });
  expect(allowed.status).toBe(303);
  return new URL(allowed.headers.get('location')!);
}

/** The project's Python venv with authlib, or null (and why) when there is no python3. */
function authlibPython(): { python: string } | { skip: string } {
  if (spawnSync('python3', ['--version']).status !== 0)
    return { skip: 'python3 is not installed: the authlib OpenID Connect client test is skipped' };
  const setup = spawnSync('sh', ['scripts/authlib.sh'], { cwd: root, encoding: 'utf8' });
  if (setup.status !== 0) throw new Error(`scripts/authlib.sh failed:\n${setup.stderr}`);
  return { python: setup.stdout.trim() };
}

describe('OpenID Connect clients with their defaults against the live service', () => {
  let service: LiveService;

  beforeAll(async () => {
    service = await startLiveService();
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('openid-client: discovery, authorization code with PKCE, nonce and max_age, ID token checks, userinfo, refresh', async () => {
    const c = service.credentials;
    const config = await client.discovery(
      new URL(service.baseUrl),
      c.CONTRACT_CLIENT_ID,
      c.CONTRACT_CLIENT_SECRET,
      undefined,
      { execute: [client.allowInsecureRequests] },
    );
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.CONTRACT_REDIRECT_URI,
      scope: 'openid user_info',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
      max_age: '300',
    });
    const callback = await signIn(new Browser(service.baseUrl), url, c.CONTRACT_LOGIN, c.CONTRACT_PASSWORD);

    // openid-client checks iss (RFC 9207 and the ID token's), aud, exp, iat, nonce, auth_time against max_age.
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      expectedState: state,
      idTokenExpected: true,
      maxAge: 300,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: service.baseUrl, aud: c.CONTRACT_CLIENT_ID, nonce });
    // The signature, with the keys the discovery document points at.
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
    // RS256: the app is registered without id_token_signed_response_alg.
    await jwtVerify(tokens.id_token!, jwks, {
      issuer: service.baseUrl,
      audience: c.CONTRACT_CLIENT_ID,
      algorithms: ['RS256'],
    });

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo).toMatchObject({ sub: claims.sub, login: c.CONTRACT_LOGIN });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({
      sub: claims.sub,
      aud: c.CONTRACT_CLIENT_ID,
      auth_time: claims.auth_time,
    });
  });

  it('openid-client: a pushed authorization request (RFC 9126, buildAuthorizationUrlWithPAR) signs the user in', async () => {
    const c = service.credentials;
    const config = await client.discovery(
      new URL(service.baseUrl),
      c.CONTRACT_CLIENT_ID,
      c.CONTRACT_CLIENT_SECRET,
      undefined,
      { execute: [client.allowInsecureRequests] },
    );
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: c.CONTRACT_REDIRECT_URI,
      scope: 'openid user_info',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
      max_age: '300',
      // The consent page even when the test above left a grant of these scopes.
      prompt: 'consent',
    });
    // Only client_id and the request_uri travel through the browser.
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const callback = await signIn(new Browser(service.baseUrl), url, c.CONTRACT_LOGIN, c.CONTRACT_PASSWORD);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      expectedState: state,
      idTokenExpected: true,
      maxAge: 300,
    });
    expect(tokens.claims()).toMatchObject({ iss: service.baseUrl, aud: c.CONTRACT_CLIENT_ID, nonce });
  });

  it('authlib (Python): its Flask OAuth client registered from the discovery document signs the user in and reads userinfo', (testContext) => {
    const venv = authlibPython();
    if ('skip' in venv) {
      console.log(venv.skip);
      testContext.skip();
      return;
    }
    const c = service.credentials;
    const run = spawnSync(venv.python, [path.join(root, 'test/e2e/authlib_oidc.py')], {
      cwd: root,
      encoding: 'utf8',
      env: {
        ...process.env,
        OIDC_ISSUER: service.baseUrl,
        OIDC_CLIENT_ID: c.CONTRACT_CLIENT_ID,
        OIDC_CLIENT_SECRET: c.CONTRACT_CLIENT_SECRET,
        OIDC_REDIRECT_URI: c.CONTRACT_REDIRECT_URI,
        // Another user than openid-client's: this one has not granted `openid` yet, so consent is asked.
        OIDC_LOGIN: c.CONTRACT_B_LOGIN,
        OIDC_PASSWORD: c.CONTRACT_B_PASSWORD,
      },
    });
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as {
      id_token_claims: Record<string, unknown>;
      userinfo: Record<string, unknown>;
      scope: string;
      token_keys: string[];
    };
    expect(result.scope).toBe('openid user_info');
    expect(result.token_keys).toContain('id_token');
    expect(result.id_token_claims).toMatchObject({
      iss: service.baseUrl,
      aud: c.CONTRACT_CLIENT_ID,
      nonce: expect.any(String),
      at_hash: expect.any(String),
    });
    expect(result.userinfo).toMatchObject({ sub: result.id_token_claims.sub, login: c.CONTRACT_B_LOGIN });
  }, 180_000);
});
