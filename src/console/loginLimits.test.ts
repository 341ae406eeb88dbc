import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createUser } from '../accounts/users.ts';

// Failed logins count per account AND source address (and per address across accounts): someone
// else's failures never lock a user out, and guessing from one address is still stopped.

describe('login attempt limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Behind a proxy (TRUST_PROXY), the source address is X-Forwarded-For: one test plays several.
    server = await startTestServer({ env: { TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function logInFrom(address: string, login: string, password: string): Promise<Response> {
    const browser = new Browser(server.baseUrl);
    const headers = { 'x-forwarded-for': address };
    const page = await (await browser.fetch('/login', { headers })).text();
    return browser.fetch('/login', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        login,
        password,
        csrf_token: formFields(page).csrf_token!,
        return_to: '/settings',
      }).toString(),
    });
  }

  it("someone else's failures do not lock the account: the right password from a fresh address signs in (OWASP, account lockout)", async () => {
    await createUser(server.ctx, { login: 'victim', password: 'v-i-c-t-i-m-password' });
    const attacker = '203.0.113.7';
    for (let i = 0; i < 10; i += 1) expect((await logInFrom(attacker, 'victim', `guess-${i}`)).status).toBe(401);
    const stopped = await logInFrom(attacker, 'victim', 'guess-10');
    expect(stopped.status).toBe(429);
    expect(Number(stopped.headers.get('retry-after'))).toBeGreaterThan(0);
    // The attacker's address stays stopped even with the right password: guessing is slowed.
    expect((await logInFrom(attacker, 'victim', 'v-i-c-t-i-m-password')).status).toBe(429);

    expect((await logInFrom('198.51.100.2', 'victim', 'v-i-c-t-i-m-password')).status).toBe(303);
    // And the attacker's address may still sign in to another account.
    await createUser(server.ctx, { login: 'neighbour', password: 'n-e-i-g-h-b-o-u-r-password' });
    expect((await logInFrom(attacker, 'neighbour', 'n-e-i-g-h-b-o-u-r-password')).status).toBe(303);
  });
});
