import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createUser } from '../accounts/users.ts';

// Where signing in lands: a newcomer's own workflows, unless the login page was sent a return_to
// (a page that asked for a session, an authorization request), which it then goes back to.

describe('where signing in lands', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    await createUser(server.ctx, { login: 'newcomer', password: 'n-e-w-c-o-m-e-r-password' });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function signIn(loginPath: string): Promise<Response> {
    const browser = new Browser(server.baseUrl);
    const page = await (await browser.fetch(loginPath)).text();
    const fields = formFields(page);
    return browser.post('/login', { ...fields, login: 'newcomer', password: 'n-e-w-c-o-m-e-r-password' });
  }

  it('lands on the workflows without a return_to', async () => {
    const res = await signIn('/login');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/workflows');
  });

  it('goes back to a return_to on this site, and never to another one', async () => {
    expect((await signIn('/login?return_to=%2Fsettings%2Ftokens')).headers.get('location')).toBe('/settings/tokens');
    expect((await signIn('/login?return_to=%2F%2Fevil.example%2F')).headers.get('location')).toBe('/workflows');
  });
});
