import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, createFixture, formFields, logIn, type Fixture } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { DEVICE_GUESSES_PER_ADDRESS, DEVICE_GUESSES_PER_USER } from '../console/pages/device.ts';

// The device authorization grant (RFC 8628) end to end through the real server: the device's
// request, the user's /device page (login, code, consent, decision) and the device's polls, with
// every answer of 3.5, on each store.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

interface DeviceAnswer {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

describe.each(testDialects())('the device authorization grant, on %s', (dialect) => {
  let server: TestServer;
  let f: Fixture;
  let browser: Browser;
  beforeAll(async () => {
    server = await startTestServer({ dialect, env: { TRUST_PROXY: 'true' } });
    f = await createFixture(server.ctx.db);
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password, '/device')).status).toBe(303);
  });
  afterAll(async () => {
    await server?.close();
  });

  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });

  async function start(scope = 'user_info', client: Fixture = f): Promise<DeviceAnswer> {
    const res = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ scope, client_id: client.clientId, client_secret: client.clientSecret }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return (await res.json()) as DeviceAnswer;
  }

  async function poll(deviceCode: string, client: Fixture = f) {
    const res = await fetch(
      `${server.baseUrl}/api/open/oauth/token`,
      form({
        grant_type: DEVICE_GRANT,
        device_code: deviceCode,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    );
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  /** The user's side: the code typed on /device, then Allow or Deny on the consent it shows. */
  async function decide(userCode: string, decision: 'allow' | 'deny', as: Browser = browser) {
    const entry = await (await as.fetch('/device')).text();
    const consent = await as.post('/device', { user_code: userCode, csrf_token: formFields(entry).csrf_token! });
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain(f.appName);
    const fields = formFields(page);
    const done = await as.post('/device/decision', { ...fields, decision });
    return { status: done.status, page: await done.text() };
  }

  /** Runs `steps` on the service's clock stopped at `at` (ms), so poll timing is the test's, not the machine's. */
  async function atTime<T>(at: number, steps: () => Promise<T>): Promise<T> {
    server.ctx.now = () => at;
    try {
      return await steps();
    } finally {
      server.ctx.now = Date.now;
    }
  }

  it('answers RFC 8628 3.2: codes, the verification URIs, a short lifetime and the interval', async () => {
    const answer = await start('openid user_info');
    expect(answer.device_code).toMatch(/^dvc_[A-Za-z0-9_-]{43}$/);
    expect(answer.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(answer.verification_uri).toBe(`${server.baseUrl}/device`);
    expect(answer.verification_uri_complete).toBe(`${server.baseUrl}/device?user_code=${answer.user_code}`);
    expect([answer.expires_in, answer.interval]).toEqual([600, 5]);
    // Stored hashed only: neither code can be read back from the table.
    const row = await server.ctx.db('device_authorizations').orderBy('id', 'desc').first();
    expect(JSON.stringify(row)).not.toContain(answer.device_code);
    expect(JSON.stringify(row)).not.toContain(answer.user_code.replace('-', ''));
  });

  it('happy path: pending, slow_down (the interval grows by 5 s), approved on /device, one pair with an ID token', async () => {
    const { device_code, user_code } = await start('openid user_info');
    const t = Date.now();
    expect((await atTime(t, () => poll(device_code))).body.error).toBe('authorization_pending');
    // 4.999 s later: too soon; the interval becomes 10 s.
    const fast = await atTime(t + 4_999, () => poll(device_code));
    expect([fast.status, fast.body.error]).toEqual([400, 'slow_down']);
    expect(fast.body.error_description).toContain('10 seconds');
    expect((await atTime(t + 14_998, () => poll(device_code))).body.error).toBe('slow_down');
    // 15 s after that (the interval now 15 s): on time.
    expect((await atTime(t + 29_998, () => poll(device_code))).body.error).toBe('authorization_pending');

    // The page's code is case-insensitive, and dashes and spaces do not matter.
    const done = await decide(` ${user_code.toLowerCase().replace('-', ' ')} `, 'allow');
    expect(done.status).toBe(200);
    expect(done.page).toContain('Device connected');

    const issued = await poll(device_code);
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ token_type: 'Bearer', scope: 'openid user_info' });
    expect(issued.body.id_token).toBeTruthy();
    const me = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { Authorization: `Bearer ${issued.body.access_token}` },
    });
    expect(((await me.json()) as { login: string }).login).toBe(f.login);
  });

  it('a replayed device code is invalid_grant and revokes the pair it issued', async () => {
    const { device_code, user_code } = await start();
    await decide(user_code, 'allow');
    const first = await poll(device_code);
    expect(first.status).toBe(200);
    const again = await poll(device_code);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    const me = await fetch(`${server.baseUrl}/api/open/v1/userinfo`, {
      headers: { Authorization: `Bearer ${first.body.access_token}` },
    });
    expect(me.status).toBe(401);
    const refreshed = await fetch(
      `${server.baseUrl}/api/open/oauth/token`,
      form({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token!,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    );
    expect(refreshed.status).toBe(400);
  });

  it('concurrent polls of an approved code issue exactly one pair', async () => {
    const { device_code, user_code } = await start();
    await decide(user_code, 'allow');
    const before = Number((await server.ctx.db('oauth_tokens').count({ n: '*' }).first())!.n);
    const answers = await Promise.all(Array.from({ length: 6 }, () => poll(device_code)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.error).toBe('invalid_grant');
    expect(Number((await server.ctx.db('oauth_tokens').count({ n: '*' }).first())!.n)).toBe(before + 1);
  });

  it('denied: access_denied, and the user code cannot be decided again', async () => {
    const { device_code, user_code } = await start();
    const done = await decide(user_code, 'deny');
    expect(done.page).toContain('Request denied');
    expect((await poll(device_code)).body.error).toBe('access_denied');
    const entry = await (await browser.fetch('/device')).text();
    const reused = await browser.post('/device', { user_code, csrf_token: formFields(entry).csrf_token! });
    expect(reused.status).toBe(400);
    expect(await reused.text()).toContain('That code is not valid');
  });

  it('expired: expired_token for the device, a clear message on the page', async () => {
    const { device_code, user_code } = await start();
    await server.ctx
      .db('device_authorizations')
      .update({ expires_at: Date.now() - 1 })
      .whereNotNull('id')
      .where('status', 'pending');
    expect((await poll(device_code)).body.error).toBe('expired_token');
    const entry = await (await browser.fetch('/device')).text();
    const late = await browser.post('/device', { user_code, csrf_token: formFields(entry).csrf_token! });
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('expired');
  });

  it("another client's device code is invalid_grant and changes nothing for its own client", async () => {
    const other = await createFixture(server.ctx.db);
    const { device_code, user_code } = await start();
    expect((await poll(device_code, other)).body.error).toBe('invalid_grant');
    await decide(user_code, 'allow');
    expect((await poll(device_code)).status).toBe(200);
  });

  it('malformed and oversized input gets the documented errors, never a 500', async () => {
    const missing = await fetch(
      `${server.baseUrl}/api/open/oauth/token`,
      form({ grant_type: DEVICE_GRANT, client_id: f.clientId, client_secret: f.clientSecret }),
    );
    expect([missing.status, ((await missing.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
    for (const device_code of ['dvc_\u00e9t\u00e9', 'x'.repeat(513)]) {
      const res = await poll(device_code);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
    }
    expect((await poll('dvc_unknown')).body.error).toBe('invalid_grant');
    const noSecret = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ scope: 'user_info', client_id: f.clientId }),
    );
    expect(noSecret.status).toBe(401);
    const wrongSecret = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ scope: 'user_info', client_id: f.clientId, client_secret: 'cs_wrong' }),
    );
    expect([wrongSecret.status, wrongSecret.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="token"']);
    const noScope = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ client_id: f.clientId, client_secret: f.clientSecret }),
    );
    expect([noScope.status, ((await noScope.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
    const unknownScope = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ scope: 'user_info admin', client_id: f.clientId, client_secret: f.clientSecret }),
    );
    expect([unknownScope.status, ((await unknownScope.json()) as { error: string }).error]).toEqual([
      400,
      'invalid_scope',
    ]);
    const json = await fetch(`${server.baseUrl}/api/open/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ scope: 'user_info', client_id: f.clientId, client_secret: f.clientSecret }),
    });
    expect([json.status, ((await json.json()) as { error: string }).error]).toEqual([415, 'invalid_request']);
    const huge = await fetch(
      `${server.baseUrl}/api/open/oauth/device_authorization`,
      form({ scope: 'user_info '.repeat(200_000), client_id: f.clientId, client_secret: f.clientSecret }),
    );
    expect([huge.status, ((await huge.json()) as { error: string }).error]).toEqual([413, 'invalid_request']);
    const entry = await (await browser.fetch('/device')).text();
    const csrf_token = formFields(entry).csrf_token!;
    for (const user_code of ['', 'AAAA-AAAA', 'x'.repeat(5000), '\u00e9\u00e9\u00e9\u00e9-BBBB'])
      expect((await browser.post('/device', { user_code, csrf_token })).status).toBe(400);
    // A decision without a CSRF token is refused.
    expect((await browser.post('/device/decision', { user_code: 'BCDF-GHJK', decision: 'allow' })).status).toBe(403);
  });

  it('the page asks for a login first and comes back with the code filled in, still to confirm (RFC 8628 5.4)', async () => {
    const { user_code, verification_uri_complete } = await start();
    const stranger = new Browser(server.baseUrl);
    const path = new URL(verification_uri_complete).pathname + new URL(verification_uri_complete).search;
    const first = await stranger.fetch(path);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    const back = await logIn(stranger, f.login, f.password, path);
    expect(back.headers.get('location')).toBe(path);
    const page = await (await stranger.fetch(path)).text();
    expect(page).toContain(`value="${user_code}"`);
    expect(page).not.toContain('id="allow"');
  });

  it('wrong codes are limited per user, from any address (RFC 8628 5.1)', async () => {
    const guesser = await createFixture(server.ctx.db);
    const as = new Browser(server.baseUrl);
    await logIn(as, guesser.login, guesser.password, '/device');
    const csrf_token = formFields(await (await as.fetch('/device')).text()).csrf_token!;
    const guess = (address: string) =>
      as.fetch('/device', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({ user_code: 'BBBB-BBBB', csrf_token }).toString(),
      });
    // Per user: from any number of addresses.
    for (let i = 0; i < DEVICE_GUESSES_PER_USER; i += 1) expect((await guess(`198.51.100.${i + 1}`)).status).toBe(400);
    const stopped = await guess('198.51.100.200');
    expect(stopped.status).toBe(429);
    expect(Number(stopped.headers.get('retry-after'))).toBeGreaterThan(0);
    // The user's right code, from their own browser, is unaffected by the guesser's.
    const { user_code } = await start();
    expect((await decide(user_code, 'allow')).status).toBe(200);
  });

  it('wrong codes from one address are limited across users', async () => {
    const address = '203.0.113.9';
    const guessAs = async () => {
      const guesser = await createFixture(server.ctx.db);
      const as = new Browser(server.baseUrl);
      await logIn(as, guesser.login, guesser.password, '/device');
      const csrf_token = formFields(await (await as.fetch('/device')).text()).csrf_token!;
      return () =>
        as.fetch('/device', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
          body: new URLSearchParams({ user_code: 'CCCC-CCCC', csrf_token }).toString(),
        });
    };
    for (let u = 0; u < DEVICE_GUESSES_PER_ADDRESS / DEVICE_GUESSES_PER_USER; u += 1) {
      const guess = await guessAs();
      for (let i = 0; i < DEVICE_GUESSES_PER_USER; i += 1) expect((await guess()).status).toBe(400);
    }
    expect((await (await guessAs())()).status).toBe(429);
  });

  it('both metadata documents name the endpoint and the grant', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const doc = (await (await fetch(`${server.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(doc.device_authorization_endpoint).toBe(`${server.baseUrl}/api/open/oauth/device_authorization`);
      expect(doc.grant_types_supported).toContain(DEVICE_GRANT);
    }
  });
});
