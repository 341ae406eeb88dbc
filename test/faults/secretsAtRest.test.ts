// Secrets at rest: after a full flow (a user with a password, an app with a client secret, a raw
// access token, the authorization code exchanged, the refresh token used, a proxy token issued),
// a dump of every table (all rows, all columns, as text) contains none of those secrets in plain
// text: only their hashes. Then: the paths that check a client secret or a password compare in
// constant time (safeEqual over hashes, scrypt + timingSafeEqual).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as crypto from '../../src/shared/crypto.ts';
import type * as RealCrypto from '../../src/shared/crypto.ts';
import { matchClientSecret } from '../../src/accounts/apps.ts';
import { verifyLogin } from '../../src/accounts/users.ts';
import { createAccessToken } from '../../src/accounts/accessTokens.ts';
import { testDialects } from '../support/db.ts';
import { authorizeInBrowser, Browser, createFixture, logIn, PKCE } from '../support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

vi.mock('../../src/shared/crypto.ts', async (importOriginal) => {
  const real = await importOriginal<typeof RealCrypto>();
  return { ...real, safeEqual: vi.fn(real.safeEqual), verifyPassword: vi.fn(real.verifyPassword) };
});

describe.each(testDialects())('secrets at rest (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server?.close());

  async function dumpEveryTable(): Promise<{ tables: string[]; text: string }> {
    const db = server.ctx.db;
    const tables: string[] =
      dialect === 'pg'
        ? await db('pg_tables').where({ schemaname: 'public' }).pluck('tablename')
        : (
            await db.raw('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()')
          )[0].map((r: { name: string }) => r.name);
    const lines: string[] = [];
    for (const table of tables) {
      for (const row of await db(table).select('*')) {
        for (const [column, value] of Object.entries(row as Record<string, unknown>)) {
          const text = Buffer.isBuffer(value)
            ? value.toString('utf8')
            : typeof value === 'object' && value !== null
              ? JSON.stringify(value)
              : String(value);
          lines.push(`${table}.${column}=${text}`);
        }
      }
    }
    return { tables, text: lines.join('\n') };
  }

  it('stores no plaintext password, client secret, code, access, refresh, raw or proxy token, nor a private signing key (EC or RSA), in any table', async () => {
    const f = await createFixture(server.ctx.db, 'http://127.0.0.1:9/callback');
    const apiKey = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'dump',
      usageScenario: 'paid',
      permissions: ['workflows'],
    });

    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const authorize = new URL('/oauth/authorize', server.baseUrl);
    // openid: the code exchange signs an RS256 ID token, so the RSA signing key exists too.
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'openid user_info api_key',
      state: 's',
    }).toString();
    const code = (await authorizeInBrowser(browser, authorize)).searchParams.get('code')!;
    expect(code).toMatch(/^oac_/);

    const token = async (fields: Record<string, string>) => {
      const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, client_id: f.clientId, client_secret: f.clientSecret }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { access_token: string; refresh_token: string; id_token?: string };
    };
    const first = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: f.redirectUri,
      code_verifier: PKCE.verifier,
    });
    const second = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    const detail = await fetch(`${server.baseUrl}/api/open/v1/${f.login}/tokens/${apiKey.record.id}`, {
      headers: { authorization: `Bearer ${second.access_token}` },
    });
    expect(detail.status).toBe(200);
    const proxyToken = ((await detail.json()) as { proxy_access_token: string }).proxy_access_token;
    // The gateway accepts both the proxy token and the raw token (so each was really usable).
    for (const credential of [proxyToken, apiKey.token]) {
      const res = await fetch(`${server.baseUrl}/serverless/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
    }

    const secrets: Record<string, string> = {
      password: f.password,
      'client secret': f.clientSecret,
      'authorization code': code,
      'access token': first.access_token,
      'refresh token': first.refresh_token,
      'rotated access token': second.access_token,
      'rotated refresh token': second.refresh_token,
      'raw access token': apiKey.token,
      'proxy token': proxyToken,
      'session cookie': [...browser.cookies.values()].join('; '),
    };
    // The private members of every signing key (EC and RSA), as the key-encryption key opens them.
    expect(first.id_token!.split('.')).toHaveLength(3);
    const keyRows = (await server.ctx.db('signing_keys').select('kid', 'alg', 'private_jwk')) as Array<{
      kid: string;
      alg: string;
      private_jwk: string;
    }>;
    expect(keyRows.map((r) => r.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const row of keyRows) {
      const jwk = JSON.parse(server.ctx.sealer.open(row.private_jwk, `signing_keys.private_jwk:${row.kid}`)) as Record<
        string,
        string
      >;
      for (const member of row.alg === 'RS256' ? ['d', 'p', 'q', 'dp', 'dq', 'qi'] : ['d'])
        secrets[`${row.alg} private key member ${member}`] = jwk[member]!;
    }
    const { tables, text } = await dumpEveryTable();
    expect(tables).toEqual(
      expect.arrayContaining(['users', 'applications', 'oauth_codes', 'oauth_tokens', 'access_tokens']),
    );
    // The flow did write: the hashes are there.
    expect(text).toContain(crypto.hashToken(first.refresh_token));
    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret.length, what).toBeGreaterThan(8);
      expect(text.includes(secret), `${what} in plain text`).toBe(false);
      // Nor a tell-tale part of it (the API key's first 10 characters are kept on purpose, for display).
      expect(text.includes(secret.slice(-24)), `the end of the ${what}`).toBe(false);
    }
  }, 60_000);

  it('checks client secrets and passwords with constant-time comparisons', async () => {
    const f = await createFixture(server.ctx.db);
    vi.mocked(crypto.safeEqual).mockClear();
    vi.mocked(crypto.verifyPassword).mockClear();

    // Every stored secret of the app is compared (two during a rotation), without stopping at a match.
    const secrets = [
      { secret_hash: crypto.hashToken(f.clientSecret) },
      { secret_hash: crypto.hashToken('cs_another') },
    ];
    expect(matchClientSecret(secrets, f.clientSecret)).toBe(secrets[0]);
    expect(matchClientSecret(secrets, f.clientSecret.slice(0, -1) + 'x')).toBeUndefined();
    expect(crypto.safeEqual).toHaveBeenCalledTimes(4);
    expect(crypto.safeEqual).toHaveBeenCalledWith(expect.stringMatching(/^[0-9a-f]{64}$/), secrets[0]!.secret_hash);
    expect(crypto.safeEqual).toHaveBeenLastCalledWith(expect.stringMatching(/^[0-9a-f]{64}$/), secrets[1]!.secret_hash);

    // The token endpoint authenticates its client through the same check.
    const res = await fetch(`${server.baseUrl}/api/open/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'ghr_nope',
        client_id: f.clientId,
        client_secret: 'cs_wrong',
      }),
    });
    expect(res.status).toBe(401);
    expect(crypto.safeEqual).toHaveBeenCalledTimes(5);

    expect(await verifyLogin(server.ctx, f.login, f.password)).toMatchObject({ login: f.login });
    expect(await verifyLogin(server.ctx, f.login, 'wrong password')).toBeNull();
    // An unknown login still costs one scrypt verification (no timing oracle for account names).
    expect(await verifyLogin(server.ctx, 'nobody-here', 'wrong password')).toBeNull();
    expect(crypto.verifyPassword).toHaveBeenCalledTimes(3);
  });
});

describe('safeEqual', () => {
  it('is true only for equal strings, including unequal lengths and non-ASCII', () => {
    expect(crypto.safeEqual('a'.repeat(64), 'a'.repeat(64))).toBe(true);
    expect(crypto.safeEqual('a'.repeat(64), 'a'.repeat(63) + 'b')).toBe(false);
    expect(crypto.safeEqual('abc', 'abcd')).toBe(false);
    expect(crypto.safeEqual('', '')).toBe(true);
    expect(crypto.safeEqual('é', 'e\u0301')).toBe(false);
  });
});
