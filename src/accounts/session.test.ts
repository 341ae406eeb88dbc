import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createUser, deleteUser, setPassword } from './users.ts';
import { authTimeOf, decodeSession, encodeSession } from './session.ts';

/** A second browser holding a copy of `from`'s cookies: what a stolen cookie gives an attacker. */
function copyOf(from: Browser): Browser {
  const copy = new Browser(from.baseUrl);
  for (const [k, v] of from.cookies) copy.cookies.set(k, v);
  return copy;
}

async function signedIn(browser: Browser): Promise<boolean> {
  const res = await browser.fetch('/settings/applications');
  if (res.status === 200) return true;
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toMatch(/^\/login\?return_to=/);
  return false;
}

describe('server-side browser sessions', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('logout ends the session at once: a copy of the cookie no longer signs in', async () => {
    await createUser(server.ctx, { login: 'leaver', password: 'l-e-a-v-e-r-password' });
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'leaver', 'l-e-a-v-e-r-password')).status).toBe(303);
    const stolen = copyOf(browser);
    expect(await signedIn(stolen)).toBe(true);

    const page = await (await browser.fetch('/settings/applications')).text();
    const logout = await browser.post('/logout', { csrf_token: formFields(page).csrf_token! });
    expect(logout.status).toBe(303);
    expect(await signedIn(stolen)).toBe(false);
    expect(await signedIn(browser)).toBe(false);
  });

  it('a password change ends every session of the user; the new password signs in', async () => {
    await createUser(server.ctx, { login: 'changer', password: 'old-password-1' });
    const [first, second] = [new Browser(server.baseUrl), new Browser(server.baseUrl)];
    await logIn(first, 'changer', 'old-password-1');
    await logIn(second, 'changer', 'old-password-1');
    const other = new Browser(server.baseUrl);
    await createUser(server.ctx, { login: 'bystander', password: 'b-y-s-t-a-n-d-e-r-password' });
    await logIn(other, 'bystander', 'b-y-s-t-a-n-d-e-r-password');

    expect((await setPassword(server.ctx, 'changer', 'new-password-1')).sessionsEnded).toBe(2);
    expect(await signedIn(first)).toBe(false);
    expect(await signedIn(second)).toBe(false);
    expect(await signedIn(other)).toBe(true); // someone else's session stands
    expect((await logIn(first, 'changer', 'old-password-1')).status).toBe(401);
    expect((await logIn(first, 'changer', 'new-password-1')).status).toBe(303);
    expect(await signedIn(first)).toBe(true);
  });

  it('deleting the user ends their sessions at once', async () => {
    await createUser(server.ctx, { login: 'goner', password: 'g-o-n-e-r-password' });
    const browser = new Browser(server.baseUrl);
    await logIn(browser, 'goner', 'g-o-n-e-r-password');
    expect(await signedIn(browser)).toBe(true);
    await deleteUser(server.ctx, 'goner');
    expect(await signedIn(browser)).toBe(false);
  });

  it('stores only a hash of the session id', async () => {
    await createUser(server.ctx, { login: 'hashed', password: 'h-a-s-h-e-d-password' });
    const browser = new Browser(server.baseUrl);
    await logIn(browser, 'hashed', 'h-a-s-h-e-d-password');
    const rows = (await server.ctx.db('web_sessions').pluck('id_hash')) as string[];
    const cookie = browser.cookies.get('oa_session')!;
    const sid = (JSON.parse(Buffer.from(cookie.split('.')[0]!, 'base64url').toString()) as { sid: string }).sid;
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r))).toBe(true);
    expect(rows).not.toContain(sid);
  });
});

describe('the session cookie under https', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { BASE_URL: 'https://auth.example.test' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('takes the __Host- prefix, with Secure, Path=/ and no Domain, and signs in with it', async () => {
    await createUser(server.ctx, { login: 'secure', password: 's-e-c-u-r-e-password' });
    const res = await fetch(`${server.baseUrl}/login`);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-oa_session='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; Path=\//i);
    expect(cookie).not.toMatch(/Domain=/i);
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'secure', 's-e-c-u-r-e-password')).status).toBe(303);
    expect([...browser.cookies.keys()]).toEqual(['__Host-oa_session']);
    expect(await signedIn(browser)).toBe(true);
  });
});

describe('auth_time of a web session (OpenID Connect Core 2: when the user logged in)', () => {
  const key = Buffer.alloc(32, 7);

  it('is recorded in the signed cookie at login, and a cookie from before it reads the login time from its expiry', () => {
    const signedIn = decodeSession(
      key,
      encodeSession(key, { sid: 's1', uid: 1, exp: 2_000_028_800, auth_time: 1_999_999_000 }),
      1_999_999_500_000,
    )!;
    expect(authTimeOf(signedIn)).toBe(1_999_999_000);
    // Sessions last 8 hours from login: exp - 8 h is when it began.
    const legacy = decodeSession(
      key,
      encodeSession(key, { sid: 's2', uid: 1, exp: 2_000_028_800 }),
      1_999_999_500_000,
    )!;
    expect(authTimeOf(legacy)).toBe(2_000_000_000);
  });

  it('refuses a cookie whose auth_time is not a whole number', () => {
    const forged = encodeSession(key, {
      sid: 's3',
      uid: 1,
      exp: 2_000_028_800,
      auth_time: 'soon' as unknown as number,
    });
    expect(decodeSession(key, forged, 1_999_999_500_000)).toBeNull();
  });
});
