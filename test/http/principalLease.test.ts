import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApplication } from '../../src/oauth/authorizations.ts';
import { issuanceLeaseKey } from '../../src/open/tokens.ts';
import { createAccessToken, deleteAccessToken } from '../../src/accounts/accessTokens.ts';
import { createUser } from '../../src/accounts/users.ts';
import { principalLease } from '../../src/shared/principalLease.ts';
import { testDialects } from '../support/db.ts';
import { createFixture, discover, obtainTokens } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The lease-based principal cache across API processes: two app instances on one database, each with
// its own cache. A token revoked through A is refused by B as soon as the revoking call has answered,
// although B had just read it into its cache (on a quiet machine its lease is still running when A
// commits; the tests assert no timing, only that B cached it and refuses it afterwards).

describe.each(testDialects())('principal lease across two app instances (%s)', (dialect) => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    a = await startTestServer({ dialect, env: { PRINCIPAL_CACHE_MS: '250' } });
    b = await startTestServer({ databaseUrl: a.databaseUrl, env: { PRINCIPAL_CACHE_MS: '250' } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('an access token revoked through A (RFC 7009) is refused by B as soon as the revocation answered', async () => {
    const f = await createFixture(a.ctx.db);
    const { tokens } = await obtainTokens(a.baseUrl, await discover(a.baseUrl), f, 'user_info');
    const userinfoOnB = () =>
      fetch(`${b.baseUrl}/api/open/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });

    expect((await userinfoOnB()).status).toBe(200);
    expect(principalLease(b.ctx).holds('oauth', tokens.access_token, false)).toBe(true); // B cached it

    const revoked = await fetch(`${a.baseUrl}/api/open/oauth/revoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: tokens.access_token }),
    });
    expect(revoked.status).toBe(200);
    const refused = await userinfoOnB();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('an API key deleted through A is refused by B as soon as the deletion answered', async () => {
    const user = await createUser(a.ctx, { login: `lease${dialect}`, password: 'correct horse battery' });
    const { token, record } = await createAccessToken(a.ctx, {
      userId: user.id,
      namespace: user.login,
      name: 'k',
      usageScenario: 'trial',
      permissions: ['workflows'],
    });
    const workflowsOnB = () => fetch(`${b.baseUrl}/api/workflows`, { headers: { authorization: `Bearer ${token}` } });

    expect((await workflowsOnB()).status).toBe(200);
    expect(principalLease(b.ctx).holds('apiKey', token, false)).toBe(true);

    await deleteAccessToken(a.ctx, user.id, record.id);
    expect((await workflowsOnB()).status).toBe(401);
  });

  it('token detail on B issues no proxy token for a raw token deleted, or an app revoked, through A once that call answered', async () => {
    const f = await createFixture(a.ctx.db);
    const kept = await createAccessToken(a.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'kept',
      usageScenario: 'paid',
    });
    const doomed = await createAccessToken(a.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'doomed',
      usageScenario: 'trial',
    });
    const { tokens } = await obtainTokens(a.baseUrl, await discover(a.baseUrl), f, 'api_key');
    const detailOnB = (id: number) =>
      fetch(`${b.baseUrl}/api/open/v1/${f.login}/tokens/${id}`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
    const leasedOnB = async (id: number) => {
      const answer = await detailOnB(id);
      expect(answer.status).toBe(200);
      const { sub, aid } = decodeJwt(((await answer.json()) as { proxy_access_token: string }).proxy_access_token);
      const principal = {
        kind: 'oauth' as const,
        userId: Number(sub),
        applicationId: 0,
        clientId: f.clientId,
        authorizationId: Number(aid),
        scopes: ['api_key'],
      };
      expect(principalLease(b.ctx).holds('issuance', issuanceLeaseKey(principal, f.login, id), false)).toBe(true); // B cached its check
    };

    await leasedOnB(doomed.record.id);
    await deleteAccessToken(a.ctx, f.userId, doomed.record.id);
    expect((await detailOnB(doomed.record.id)).status).toBe(404);

    await leasedOnB(kept.record.id);
    const app = await a.ctx.db('applications').where({ client_id: f.clientId }).first('id');
    await revokeApplication(a.ctx, f.userId, Number(app.id));
    expect((await detailOnB(kept.record.id)).status).toBe(401);
  });
});
