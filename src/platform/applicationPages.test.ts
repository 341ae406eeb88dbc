import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, createFixture, discover, formFields, logIn, obtainTokens } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { findAppByClientId, verifyClientSecret } from './apps.ts';
import { createUser } from './users.ts';

// The settings pages for third-party applications: register (secret shown once), rotate the
// secret, delete; only the owner can; CSRF on every form.

describe.each(testDialects())('application settings pages (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    await createUser(server.ctx.db, { login: 'owner', password: 'password-1' });
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'owner', 'password-1')).status).toBe(303);
  });
  afterAll(() => server.close());

  async function post(path: string, fields: Record<string, string> = {}, as = browser): Promise<Response> {
    const { csrf_token } = formFields(await (await as.fetch('/settings/applications')).text());
    return as.post(path, { csrf_token: csrf_token!, ...fields });
  }

  function shownCredentials(page: string): { clientId: string; clientSecret: string } {
    return {
      clientId: /<code id="client-id">([^<]+)<\/code>/.exec(page)![1]!,
      clientSecret: /<code id="client-secret">([^<]+)<\/code>/.exec(page)![1]!,
    };
  }

  async function register(name: string): Promise<{ id: number; clientId: string; clientSecret: string }> {
    const res = await post('/settings/applications', { name, description: 'Keeps notes', homepage: 'https://notes.example/', redirect_uri: 'https://notes.example/cb' });
    expect(res.status).toBe(200);
    const credentials = shownCredentials(await res.text());
    const app = await findAppByClientId(server.ctx.db, credentials.clientId);
    return { id: app!.id, ...credentials };
  }

  it('registers an app and shows its client secret once; the list never shows it again', async () => {
    const app = await register('Notes');
    const stored = await findAppByClientId(server.ctx.db, app.clientId);
    expect(stored).toMatchObject({ name: 'Notes', homepage: 'https://notes.example/', redirect_uri: 'https://notes.example/cb' });
    expect(verifyClientSecret(stored!, app.clientSecret)).toBe(true);
    const list = await (await browser.fetch('/settings/applications')).text();
    expect(list).toContain(app.clientId);
    expect(list).not.toContain(app.clientSecret);
  });

  it('accepts a plain-http callback only on a loopback host (RFC 8252 7.3); elsewhere https', async () => {
    const attempt = (redirect_uri: string) => post('/settings/applications', { name: 'Local', description: '', homepage: 'https://l.example/', redirect_uri });
    const refused = await attempt('http://notes.example/cb');
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/must use https/i); // the field's message, capitalised under it
    for (const uri of ['http://localhost:4000/callback', 'http://127.0.0.1:9/cb', 'http://[::1]:8080/cb']) expect((await attempt(uri)).status).toBe(200);
  });

  it('refuses a registration with a bad callback URL, showing why and keeping the input', async () => {
    const res = await post('/settings/applications', { name: 'Broken', description: '', homepage: 'https://b.example/', redirect_uri: 'not a url' });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('class="error"');
    expect(page).toContain('value="Broken"');
  });

  it('rotates the secret: the new one authenticates, the old one no longer does', async () => {
    const app = await register('Rotating');
    const res = await post(`/settings/applications/${app.id}/rotate`);
    expect(res.status).toBe(200);
    const rotated = shownCredentials(await res.text());
    expect(rotated.clientId).toBe(app.clientId);
    const stored = await findAppByClientId(server.ctx.db, app.clientId);
    expect(verifyClientSecret(stored!, rotated.clientSecret)).toBe(true);
    expect(verifyClientSecret(stored!, app.clientSecret)).toBe(false);
  });

  it('deletes an app, and the tokens it was granted stop working at once', async () => {
    const fixture = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), fixture, 'user_info');
    const userinfo = () => fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo()).status).toBe(200);

    const ownerBrowser = new Browser(server.baseUrl);
    await logIn(ownerBrowser, fixture.login, fixture.password);
    const app = await findAppByClientId(server.ctx.db, fixture.clientId);
    const res = await post(`/settings/applications/${app!.id}/delete`, {}, ownerBrowser);
    expect(res.status).toBe(303);
    expect(await findAppByClientId(server.ctx.db, fixture.clientId)).toBeUndefined();
    expect((await userinfo()).status).toBe(401);
  });

  it("answers 404 to rotating or deleting another user's app, and changes nothing", async () => {
    const foreign = await createFixture(server.ctx.db);
    const app = await findAppByClientId(server.ctx.db, foreign.clientId);
    expect((await post(`/settings/applications/${app!.id}/rotate`)).status).toBe(404);
    expect((await post(`/settings/applications/${app!.id}/delete`)).status).toBe(404);
    const after = await findAppByClientId(server.ctx.db, foreign.clientId);
    expect(verifyClientSecret(after!, foreign.clientSecret)).toBe(true);
  });

  it('refuses a form without its CSRF token and changes nothing', async () => {
    const app = await register('Guarded');
    const res = await browser.post(`/settings/applications/${app.id}/delete`, {});
    expect(res.status).toBe(403);
    expect(await findAppByClientId(server.ctx.db, app.clientId)).toBeDefined();
  });
});
