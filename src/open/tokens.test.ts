import { generateKeyPairSync } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import {
  createFixture,
  discover,
  formFields,
  obtainTokens,
  type Browser,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken, deleteAccessToken } from '../accounts/accessTokens.ts';
import { addMember, createOrg, removeMember } from '../accounts/orgs.ts';
import { createUser } from '../accounts/users.ts';
import { signProxyToken } from './proxyTokens.ts';
import { issuanceLeaseKey, issueProxyToken } from './tokens.ts';
import { revokeApplication } from '../oauth/authorizations.ts';
import { principalLease, revocationLease } from '../shared/principalLease.ts';
import { keyRing, rotateSigningKeys } from './signingKeys.ts';

// The third-party flow continued past the OAuth issue: with an `api_key` access token the app lists
// the user's raw access tokens, fetches a proxy token, verifies it against the JWKS with jose and
// calls the serverless gateway with it; the user's revocation and deletion kill it at once.

describe.each(testDialects())('open token interfaces and proxy tokens (%s)', (dialect) => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let secrets: string[];

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    as = await discover(server.baseUrl);
    secrets = [];
  });
  afterAll(async () => {
    // The raw tokens never appear in any log line the service wrote.
    for (const secret of secrets) expect(server.logs.join('\n')).not.toContain(secret);
    await server?.close();
  });

  /** A user with a registered app, two raw tokens in their namespace, and an `api_key` access token for the app. */
  async function setUp(scope = 'user_info api_key') {
    const f = await createFixture(server.ctx.db);
    const paid = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'Production key',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    const trial = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'Trial key',
      usageScenario: 'trial',
    });
    secrets.push(paid.token, trial.token);
    const { browser, tokens } = await obtainTokens(server.baseUrl, as, f, scope);
    secrets.push(tokens.access_token);
    return {
      f,
      paid,
      trial,
      browser,
      accessToken: tokens.access_token,
      api: createApiClient(server.baseUrl, { bearer: tokens.access_token }),
    };
  }

  async function detail(accessToken: string, namespace: string, id: number) {
    const api = createApiClient(server.baseUrl, { bearer: accessToken });
    return api.GET('/api/open/v1/{namespace}/tokens/{id}', { params: { path: { namespace, id } } });
  }

  function chat(bearer: string, content = 'hello proxy') {
    return createApiClient(server.baseUrl, { bearer }).POST('/serverless/v1/chat/completions', {
      body: { model: 'echo', messages: [{ role: 'user', content }] },
    });
  }

  async function revokeInSettings(browser: Browser, f: Fixture): Promise<void> {
    const list = await (await browser.fetch('/settings/authorizations')).text();
    expect(list).toContain(f.appName);
    // Revoke asks first: the list links to a confirm page, whose form posts the revocation.
    const confirmPath = /href="(\/settings\/authorizations\/\d+\/revoke)"/.exec(list)![1]!;
    const page = await (await browser.fetch(confirmPath)).text();
    const action = /action="(\/settings\/authorizations\/\d+\/revoke)"/.exec(page)![1]!;
    const res = await browser.post(action, { csrf_token: formFields(page).csrf_token! });
    expect(res.status).toBe(303);
  }

  it('lists, details, verifies with jose against /.well-known/jwks.json, and completes through the gateway with echo', async () => {
    const { f, paid, trial, api, accessToken } = await setUp();

    const list = await api.GET('/api/open/v1/{namespace}/tokens', { params: { path: { namespace: f.login } } });
    expect(list.response.status).toBe(200);
    expect(list.data).toEqual([
      { id: paid.record.id, name: 'Production key', usage_scenario: 'paid' },
      { id: trial.record.id, name: 'Trial key', usage_scenario: 'trial' },
    ]);

    const { data, response } = await detail(accessToken, f.login, paid.record.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(data!).sort()).toEqual(['expires_in', 'id', 'name', 'proxy_access_token', 'usage_scenario']);
    expect(data).toMatchObject({
      id: paid.record.id,
      name: 'Production key',
      usage_scenario: 'paid',
      expires_in: 1800,
    });
    expect(JSON.stringify(data)).not.toContain(paid.token);

    const jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(data!.proxy_access_token, jwks, {
      issuer: server.baseUrl,
      audience: `${server.baseUrl}/serverless`,
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: expect.any(String), typ: 'at+jwt' });
    expect(payload).toMatchObject({
      sub: String(f.userId),
      client_id: f.clientId,
      token_id: paid.record.id,
      namespace: f.login,
      usage_scenario: 'paid',
      jti: expect.any(String),
    });
    expect(payload.exp! - payload.iat!).toBe(data!.expires_in);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(5);

    const completion = await chat(data!.proxy_access_token);
    expect(completion.response.status).toBe(200);
    expect(completion.data).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      model: 'echo',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello proxy' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
    });

    // Usage is attributed to the raw token, in the log and its last use.
    const usage = server.logs.map((l) => JSON.parse(l)).find((l) => l.serverless_usage?.jti === payload.jti);
    expect(usage.serverless_usage).toMatchObject({
      access_token_id: paid.record.id,
      usage_scenario: 'paid',
      via: 'proxy_token',
      client_id: f.clientId,
      total_tokens: 4,
    });
    await expect
      .poll(async () => (await server.ctx.db('access_tokens').where({ id: paid.record.id }).first()).last_used_at)
      .not.toBeNull();
  });

  it('issues a fresh proxy token on every detail call', async () => {
    const { f, paid, accessToken } = await setUp();
    const a = await detail(accessToken, f.login, paid.record.id);
    const b = await detail(accessToken, f.login, paid.record.id);
    expect(a.data!.proxy_access_token).not.toBe(b.data!.proxy_access_token);
  });

  it('refuses the same proxy token with 401 as soon as the user revokes the app in settings, and issues no new one', async () => {
    const { f, paid, browser, accessToken } = await setUp();
    const proxy = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    expect((await chat(proxy)).response.status).toBe(200);

    await revokeInSettings(browser, f);

    const refused = await chat(proxy);
    expect(refused.response.status).toBe(401);
    expect(refused.response.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="serverless", error="invalid_token"/,
    );
    expect(refused.error).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
    expect((await detail(accessToken, f.login, paid.record.id)).response.status).toBe(401);
  });

  it('issues no proxy token once the revoking call has returned, even to a request already past its access-token check (issue 10)', async () => {
    const { f, paid, accessToken } = await setUp();
    const jwt = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    const { payload } = await jwtVerify(jwt, createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`)));
    // The principal a request held when its security handler ran, before the user revoked the app.
    const principal = {
      kind: 'oauth' as const,
      userId: f.userId,
      applicationId: 0,
      clientId: f.clientId,
      authorizationId: Number(payload.aid),
      scopes: ['api_key'],
    };
    await expect(issueProxyToken(server.ctx, principal, f.login, paid.record.id)).resolves.toMatchObject({
      id: paid.record.id,
    });
    // That issuance's check is leased: only the revoking call's wait makes the next one see the revocation.
    expect(
      principalLease(server.ctx).holds('issuance', issuanceLeaseKey(principal, f.login, paid.record.id), false),
    ).toBe(true);
    const app = await server.ctx.db('applications').where({ client_id: f.clientId }).first('id');
    await revokeApplication(server.ctx, f.userId, Number(app.id));
    await expect(issueProxyToken(server.ctx, principal, f.login, paid.record.id)).rejects.toMatchObject({
      status: 401,
    });
  });

  it('kills the proxy tokens of a raw access token once it is deleted, and leaves the others working', async () => {
    const { f, paid, trial, accessToken } = await setUp();
    const paidProxy = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    const trialProxy = (await detail(accessToken, f.login, trial.record.id)).data!.proxy_access_token;

    await deleteAccessToken(server.ctx, f.userId, paid.record.id);

    expect((await chat(paidProxy)).response.status).toBe(401);
    expect((await chat(trialProxy)).response.status).toBe(200);
    expect((await detail(accessToken, f.login, paid.record.id)).response.status).toBe(404);
  });

  it('stops an expired raw token everywhere it is used: as an API key, for new proxy tokens, and for proxy tokens minted before', async () => {
    const { f, paid, trial, accessToken } = await setUp();
    const { data } = await detail(accessToken, f.login, paid.record.id);
    const minted = data!.proxy_access_token;
    // Both expire (neither was used as an API key yet, so no process holds them). Written straight to
    // the table, standing for time passing: the detail call above leased its check, which
    // a real expiry bounds (the lease never runs past it) and this one must wait out.
    await server.ctx
      .db('access_tokens')
      .whereIn('id', [paid.record.id, trial.record.id])
      .update({ expires_at: Date.now() - 1 });
    await revocationLease.settle();

    expect((await chat(minted)).response.status).toBe(401);
    const again = await detail(accessToken, f.login, paid.record.id);
    expect(again.response.status).toBe(404);
    expect(JSON.stringify(again.error)).toContain('has expired');
    const asApiKey = await fetch(`${server.baseUrl}/api/workflows`, {
      headers: { authorization: `Bearer ${trial.token}` },
    });
    expect(asApiKey.status).toBe(401);

    // One that expires later works until then.
    const later = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'Week key',
      usageScenario: 'paid',
      permissions: ['workflows'],
      expiresInDays: 7,
    });
    secrets.push(later.token);
    expect(later.record.expires_at! - later.record.created_at).toBe(7 * 86_400_000);
    expect(
      (await fetch(`${server.baseUrl}/api/workflows`, { headers: { authorization: `Bearer ${later.token}` } })).status,
    ).toBe(200);
    expect(
      (await chat((await detail(accessToken, f.login, later.record.id)).data!.proxy_access_token)).response.status,
    ).toBe(200);
  });

  it('answers 403 insufficient_scope on the token endpoints to a token of scope user_info only', async () => {
    const { f, paid, api, accessToken } = await setUp('user_info');
    const list = await api.GET('/api/open/v1/{namespace}/tokens', { params: { path: { namespace: f.login } } });
    expect(list.response.status).toBe(403);
    expect(list.response.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="api_key"');
    expect((await detail(accessToken, f.login, paid.record.id)).response.status).toBe(403);
    // The scope it has still works.
    expect((await api.GET('/api/open/v1/orgs')).response.status).toBe(200);
  });

  it('answers 404, never a leak, for another user namespace, an org the user is not in, and another user token id', async () => {
    const { f, paid, api, accessToken } = await setUp();
    const other = await createUser(server.ctx, {
      login: `other${Date.now().toString(36)}`,
      password: 'test-password-1',
    });
    const otherToken = await createAccessToken(server.ctx, {
      userId: other.id,
      namespace: other.login,
      name: 'theirs',
      usageScenario: 'paid',
    });
    secrets.push(otherToken.token);
    const org = await createOrg(server.ctx, {
      namespace: `org${Date.now().toString(36)}`,
      name: 'Org',
      ownerLogin: other.login,
    });

    for (const namespace of [other.login, org.namespace, 'no-such-namespace']) {
      const res = await api.GET('/api/open/v1/{namespace}/tokens', { params: { path: { namespace } } });
      expect(res.response.status).toBe(404);
      expect(res.response.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await detail(accessToken, other.login, otherToken.record.id)).response.status).toBe(404);
    expect((await detail(accessToken, f.login, otherToken.record.id)).response.status).toBe(404);
    expect((await detail(accessToken, org.namespace, paid.record.id)).response.status).toBe(404);
    // The user's own token, asked for in the wrong namespace, is not found either.
    await addMember(server.ctx, org.namespace, f.login);
    expect((await detail(accessToken, org.namespace, paid.record.id)).response.status).toBe(404);
  });

  it('lists and details tokens in an organization namespace the user belongs to', async () => {
    const { f, api, accessToken } = await setUp();
    const org = await createOrg(server.ctx, {
      namespace: `team${Date.now().toString(36)}`,
      name: 'Team',
      ownerLogin: f.login,
    });
    const ci = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: org.namespace,
      name: 'CI',
      usageScenario: 'trial',
    });
    secrets.push(ci.token);
    const list = await api.GET('/api/open/v1/{namespace}/tokens', { params: { path: { namespace: org.namespace } } });
    expect(list.data).toEqual([{ id: ci.record.id, name: 'CI', usage_scenario: 'trial' }]);
    const { data } = await detail(accessToken, org.namespace, ci.record.id);
    expect(data).toMatchObject({ id: ci.record.id, usage_scenario: 'trial' });
  });

  it('stops an org token, raw and proxied, as soon as its owner leaves the org; their own tokens keep working', async () => {
    const { f, paid, accessToken } = await setUp();
    const owner = await createUser(server.ctx, {
      login: `lead${Date.now().toString(36)}`,
      password: 'test-password-1',
    });
    const org = await createOrg(server.ctx, {
      namespace: `crew${Date.now().toString(36)}`,
      name: 'Crew',
      ownerLogin: owner.login,
    });
    await addMember(server.ctx, org.namespace, f.login);
    const ci = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: org.namespace,
      name: 'CI',
      usageScenario: 'trial',
    });
    secrets.push(ci.token);
    const proxy = (await detail(accessToken, org.namespace, ci.record.id)).data!.proxy_access_token;
    const ownProxy = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    expect((await chat(proxy)).response.status).toBe(200);
    expect((await chat(ci.token)).response.status).toBe(200);

    await removeMember(server.ctx, org.namespace, f.login);

    expect((await chat(proxy)).response.status).toBe(401);
    expect((await chat(ci.token)).response.status).toBe(401);
    expect((await detail(accessToken, org.namespace, ci.record.id)).response.status).toBe(404);
    expect((await chat(ownProxy)).response.status).toBe(200);
    expect((await chat(paid.token)).response.status).toBe(200);
  });

  it('revokes a proxy token through RFC 7009 (/api/open/oauth/revoke) by the client it was issued to: when it answers, the gateway refuses it; another client cannot', async () => {
    const { f, paid, accessToken } = await setUp();
    const proxy = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    const another = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    expect((await chat(proxy)).response.status).toBe(200); // leased by this process from here on
    const revoke = (clientId: string, clientSecret: string) =>
      fetch(`${server.baseUrl}/api/open/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: proxy,
          token_type_hint: 'access_token',
          client_id: clientId,
          client_secret: clientSecret,
        }),
      });

    // Another app presenting it: 200 (RFC 7009 2.2), and nothing is revoked.
    const stranger = await createFixture(server.ctx.db);
    expect((await revoke(stranger.clientId, stranger.clientSecret)).status).toBe(200);
    expect((await chat(proxy)).response.status).toBe(200);

    // Its own client: 200, and from then on the token, the grant's other proxy tokens and its
    // OAuth access token are refused (the grant it stands on is revoked; the lease was waited out).
    const res = await revoke(f.clientId, f.clientSecret);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    for (const token of [proxy, another]) expect((await chat(token)).response.status).toBe(401);
    expect((await detail(accessToken, f.login, paid.record.id)).response.status).toBe(401);
    // The user's raw access token is the user's, not the app's: it still works.
    expect((await chat(paid.token)).response.status).toBe(200);
  });

  it('refuses an expired proxy token (401), one for another audience, and one signed by an unpublished key', async () => {
    const { f, paid, accessToken } = await setUp();
    const { claims } = await (async () => {
      const d = await detail(accessToken, f.login, paid.record.id);
      const { payload } = await jwtVerify(
        d.data!.proxy_access_token,
        createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`)),
      );
      return { claims: payload };
    })();
    const subject = {
      userId: f.userId,
      clientId: f.clientId,
      authorizationId: Number(claims.aid),
      accessTokenId: paid.record.id,
      namespace: f.login,
      usageScenario: 'paid' as const,
    };
    const key = await keyRing(server.ctx).signingKey('ES256');
    const ttl = server.ctx.config.PROXY_TOKEN_TTL_SECONDS;
    const expired = await signProxyToken(server.ctx, key, subject, Date.now() - (ttl + 5) * 1000);
    expect((await chat(expired.token)).response.status).toBe(401);
    const fresh = await signProxyToken(server.ctx, key, subject);
    expect((await chat(fresh.token)).response.status).toBe(200);

    const elsewhere = await signProxyToken(
      { ...server.ctx, config: { ...server.ctx.config, BASE_URL: 'https://elsewhere.example' } },
      key,
      subject,
    );
    expect((await chat(elsewhere.token)).response.status).toBe(401);

    const rogue = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = await signProxyToken(
      server.ctx,
      { kid: decodeProtectedHeader(fresh.token).kid!, key: rogue.privateKey },
      subject,
    );
    expect((await chat(forged.token)).response.status).toBe(401);
  });

  it('keeps tokens signed before a key rotation verifiable; the JWKS publishes the current and the previous key', async () => {
    const { f, paid, accessToken } = await setUp();
    const before = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    const oldKid = decodeProtectedHeader(before).kid!;

    const rotated = (await rotateSigningKeys(server.ctx, ['ES256'], { immediately: true })).find(
      (r) => r.alg === 'ES256',
    )!;
    expect(rotated.retired).toContain(oldKid);

    const after = (await detail(accessToken, f.login, paid.record.id)).data!.proxy_access_token;
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);

    const jwks = (await (await fetch(`${server.baseUrl}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string; kty: string; d?: string }[];
    };
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotated.kid]));
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
    expect(jwks.keys.filter((k) => k.kid === oldKid || k.kid === rotated.kid).every((k) => k.kty === 'EC')).toBe(true);

    const remote = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
    for (const token of [before, after]) {
      await jwtVerify(token, remote, { issuer: server.baseUrl, audience: `${server.baseUrl}/serverless` });
      expect((await chat(token)).response.status).toBe(200);
    }
  });
});
