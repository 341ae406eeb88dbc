// A stalled store (MariaDB frozen with SIGSTOP: its port still accepts connections, nothing
// answers) under a running service. Every request's wait on the store is bounded
// (DATABASE_STATEMENT_TIMEOUT_SECONDS: the driver's bound on an answer, and on a pooled
// connection), so each request is answered 503 + Retry-After while the store is still frozen,
// /readyz and the OAuth endpoints included, never held for the whole stall; once the store goes
// on, the same pools serve again and nothing was changed by the refused requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, discover, obtainTokens } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { mariadbAvailable, startOwnMariaDb, type OwnDatabase } from './support/databases.ts';
import { apiKeyFor, bearer, createWorkflow, waitFor } from './support/fixtures.ts';
import { revocationLease } from '../../src/shared/principalLease.ts';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';

describe.skipIf(!mariadbAvailable())('a stalled MariaDB store (SIGSTOP)', () => {
  let database: OwnDatabase;
  let server: TestServer;
  let apiKey: string;
  let workflowId: string;
  let accessToken: string;
  let refreshToken: string;
  let clientId: string;
  let clientSecret: string;

  beforeAll(async () => {
    database = await startOwnMariaDb();
    server = await startTestServer({ databaseUrl: database.url, statementTimeoutMs: 2_000, runs: { worker: false } });
    apiKey = (await apiKeyFor(server.ctx.db)).token;
    workflowId = await createWorkflow(server.baseUrl, apiKey, 'echo');
    const f = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, 'user_info');
    accessToken = tokens.access_token;
    refreshToken = tokens.refresh_token!;
    clientId = f.clientId;
    clientSecret = f.clientSecret;
  }, 120_000);
  afterAll(async () => {
    database?.resume?.();
    await server?.close();
    await database?.destroy();
  });

  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.baseUrl}${path}`, init);
    return { res, body: await res.text() };
  };
  const refresh = () =>
    call('/api/open/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });

  it('answers every request 503 + Retry-After while the store is still frozen, then serves again', async () => {
    // Every pooled connection is open and idle: the requests below find the store through them.
    await Promise.all(Array.from({ length: 5 }, () => call('/api/workflows', { headers: bearer(apiKey) })));
    await revocationLease.settle(); // no principal is served from the cache: each request reads the store
    database.pause!();
    let resumed = false;
    try {
      const json = { 'content-type': 'application/json' };
      const wf = `/api/workflows/${workflowId}`;
      // More requests than the pool has connections: some wait for one, and that wait is bounded too.
      const requests = [
        ['readyz', call('/readyz')],
        ['getUserInfo', call('/api/open/v1/userinfo', { headers: bearer(accessToken) })],
        ['token', refresh()],
        [
          'runWorkflow',
          call(`${wf}/run`, {
            method: 'POST',
            headers: bearer(apiKey, json),
            body: JSON.stringify({ inputs: { ticket: 'x' } }),
          }),
        ],
        ['listRuns', call(`${wf}/runs`, { headers: bearer(apiKey) })],
        ...Array.from(
          { length: 10 },
          (_, i) => [`listWorkflows ${i}`, call('/api/workflows', { headers: bearer(apiKey) })] as const,
        ),
      ] as const;
      const answers = await Promise.all(requests.map(async ([name, answer]) => ({ name, ...(await answer) })));
      // Answered before the store went on: the stall held none of them.
      expect(resumed).toBe(false);
      for (const { name, res, body } of answers) {
        expect(res.status, `${name}: ${body.slice(0, 300)}`).toBe(503);
        expect(res.headers.get('retry-after'), name).toBeTruthy();
        if (name === 'token') expect(JSON.parse(body), name).toMatchObject({ error: 'temporarily_unavailable' });
        else if (name === 'readyz')
          expect(JSON.parse(body)).toMatchObject({ status: 'unavailable', checks: { database: 'unavailable' } });
        else expect(res.headers.get('content-type'), name).toMatch(/^application\/problem\+json/);
      }
    } finally {
      resumed = true;
      database.resume!();
    }

    await waitFor(
      'the API answers 200 again',
      async () => (await call('/api/workflows', { headers: bearer(apiKey) })).res.status === 200,
      60_000,
    );
    expect((await call('/readyz')).res.status).toBe(200);
    expect((await call('/api/open/v1/userinfo', { headers: bearer(accessToken) })).res.status).toBe(200);
    // The refresh refused with 503 consumed nothing.
    const after = await refresh();
    expect(after.res.status, after.body).toBe(200);
  }, 180_000);

  it('ends a statement the running server is slow with at the bound (max_statement_time), as unavailable, on a connection kept usable', async () => {
    const err = await server.ctx.db.raw('SELECT SLEEP(10)').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'ER_STATEMENT_TIMEOUT' });
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(await server.ctx.db.raw('SELECT 1 AS one').then((r: [unknown[]]) => r[0])).toEqual([{ one: 1 }]);
  });
});
