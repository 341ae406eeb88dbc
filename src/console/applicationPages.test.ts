import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, createFixture, discover, formFields, logIn, obtainTokens } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { findAppByClientId, verifyClientSecret } from '../accounts/apps.ts';
import { createUser } from '../accounts/users.ts';

// The settings pages for third-party applications: register (secret shown once), rotate the
// secret, delete; only the owner can; CSRF on every form.

describe.each(testDialects())('application settings pages (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    await createUser(server.ctx, { login: 'owner', password: 'test-password-1' });
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'owner', 'test-password-1')).status).toBe(303);
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
    const res = await post('/settings/applications', {
      name,
      description: 'Keeps notes',
      homepage: 'https://notes.example/',
      redirect_uri: 'https://notes.example/cb',
    });
    expect(res.status).toBe(200);
    const credentials = shownCredentials(await res.text());
    const app = await findAppByClientId(server.ctx, credentials.clientId);
    return { id: app!.id, ...credentials };
  }

  it('registers an app and shows its client secret once; the list never shows it again', async () => {
    const app = await register('Notes');
    const stored = await findAppByClientId(server.ctx, app.clientId);
    expect(stored).toMatchObject({
      name: 'Notes',
      homepage: 'https://notes.example/',
      redirect_uri: 'https://notes.example/cb',
    });
    expect(await verifyClientSecret(server.ctx, stored!.id, app.clientSecret)).toBe(true);
    const list = await (await browser.fetch('/settings/applications')).text();
    expect(list).toContain(app.clientId);
    expect(list).not.toContain(app.clientSecret);
  });

  it('registers and edits the ID token algorithm (id_token_signed_response_alg): RS256 preselected, ES256 when chosen; a form without it changes nothing', async () => {
    const form = await (await browser.fetch('/settings/applications')).text();
    expect(form).toMatch(/<label for="id_token_signed_response_alg">ID token signing algorithm/);
    expect(form).toContain('<option value="RS256" selected>RS256</option><option value="ES256">ES256</option>');
    const fields = {
      description: 'Signs in',
      homepage: 'https://oidc.example/',
      redirect_uri: 'https://oidc.example/cb',
    };
    const registered = async (name: string, extra: Record<string, string>) => {
      const res = await post('/settings/applications', { name, ...fields, ...extra });
      expect(res.status).toBe(200);
      return (await findAppByClientId(server.ctx, shownCredentials(await res.text()).clientId))!;
    };
    expect((await registered('Default alg', {})).id_token_signed_response_alg).toBe('RS256');
    expect(
      (await registered('Chosen RS256', { id_token_signed_response_alg: 'RS256' })).id_token_signed_response_alg,
    ).toBe('RS256');
    const es = await registered('Chosen ES256', { id_token_signed_response_alg: 'ES256' });
    expect(es.id_token_signed_response_alg).toBe('ES256');

    // The app's page shows its choice; an edit that leaves the field out (a script's) keeps it, one that sets it changes it.
    expect(await (await browser.fetch(`/settings/applications/${es.id}`)).text()).toContain(
      '<option value="RS256">RS256</option><option value="ES256" selected>ES256</option>',
    );
    const edit = (extra: Record<string, string>) =>
      postOn(`/settings/applications/${es.id}`, `/settings/applications/${es.id}`, {
        name: 'Chosen ES256',
        ...fields,
        ...extra,
      });
    expect((await edit({})).status).toBe(303);
    expect((await findAppByClientId(server.ctx, es.client_id))!.id_token_signed_response_alg).toBe('ES256');
    expect((await edit({ id_token_signed_response_alg: 'RS256' })).status).toBe(303);
    expect((await findAppByClientId(server.ctx, es.client_id))!.id_token_signed_response_alg).toBe('RS256');

    // Anything else is refused at the field, keeping what was typed.
    const refused = await post('/settings/applications', {
      name: 'Bad alg',
      ...fields,
      id_token_signed_response_alg: 'none',
    });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain(
      '<p class="field-error" id="id_token_signed_response_alg-error">Must be RS256 or ES256.</p>',
    );
    expect(page).toContain('value="Bad alg"');
  });

  it('accepts a plain-http callback only on a loopback host (RFC 8252 7.3); elsewhere https', async () => {
    const attempt = (redirect_uri: string) =>
      post('/settings/applications', { name: 'Local', description: '', homepage: 'https://l.example/', redirect_uri });
    const refused = await attempt('http://notes.example/cb');
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/must use https/i); // the field's message, capitalised under it
    for (const uri of ['http://localhost:4000/callback', 'http://127.0.0.1:9/cb', 'http://[::1]:8080/cb'])
      expect((await attempt(uri)).status).toBe(200);
  });

  it("refuses a callback with userinfo (user:password@, RFC 3986 3.2.1; RFC 9700 4.1.1) with a 400 and the field's message", async () => {
    const attempt = (redirect_uri: string) =>
      post('/settings/applications', {
        name: 'Userinfo',
        description: '',
        homepage: 'https://u.example/',
        redirect_uri,
      });
    for (const uri of [
      'https://user:s3cret-pw@u.example/cb',
      'https://trusted.example@u.example/cb',
      'https://@u.example/cb',
      'http://user:s3cret-pw@localhost:4000/cb',
    ]) {
      const refused = await attempt(uri);
      expect(refused.status, uri).toBe(400);
      const page = await refused.text();
      expect(page).toMatch(/must not contain a user name or password/i);
    }
    // An @ after the host (in the path or query) is not userinfo.
    expect((await attempt('https://u.example/cb/@team?to=a@b.example')).status).toBe(200);
  });

  it('refuses a registration with a bad callback URL, showing why and keeping the input', async () => {
    const res = await post('/settings/applications', {
      name: 'Broken',
      description: '',
      homepage: 'https://b.example/',
      redirect_uri: 'not a url',
    });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('class="error"');
    expect(page).toContain('value="Broken"');
  });

  async function postOn(
    page: string,
    path: string,
    fields: Record<string, string> = {},
    as = browser,
  ): Promise<Response> {
    const { csrf_token } = formFields(await (await as.fetch(page)).text());
    return as.post(path, { csrf_token: csrf_token!, ...fields });
  }

  it('generates a second secret that works beside the first until that one is deleted (behind a confirm page); the last goes only when the user says so', async () => {
    const app = await register('Rotating');
    const res = await post(`/settings/applications/${app.id}/secrets`);
    expect(res.status).toBe(200);
    const fresh = shownCredentials(await res.text());
    expect(fresh.clientId).toBe(app.clientId);
    expect(await verifyClientSecret(server.ctx, app.id, fresh.clientSecret)).toBe(true);
    expect(await verifyClientSecret(server.ctx, app.id, app.clientSecret)).toBe(true);
    // A third is refused, saying why.
    const third = await post(`/settings/applications/${app.id}/secrets`);
    expect(third.status).toBe(409);
    expect(await third.text()).toContain('already has 2 client secrets');

    const page = await (await browser.fetch(`/settings/applications/${app.id}`)).text();
    const deletes = [...page.matchAll(/href="(\/settings\/applications\/\d+\/secrets\/\d+\/delete)"/g)].map(
      (m) => m[1]!,
    );
    expect(deletes).toHaveLength(2);
    expect(page).not.toContain(app.clientSecret);
    expect(page).not.toContain(fresh.clientSecret);
    const confirm = await (await browser.fetch(deletes[0]!)).text();
    expect(confirm).toContain('The other secret keeps working');
    const deleted = await postOn(deletes[0]!, deletes[0]!);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe(`/settings/applications/${app.id}?done=secret-deleted`);
    expect(await verifyClientSecret(server.ctx, app.id, app.clientSecret)).toBe(false);
    expect(await verifyClientSecret(server.ctx, app.id, fresh.clientSecret)).toBe(true);

    // The last one: the confirm page says what that means and its form says it is meant.
    const lastConfirm = await (await browser.fetch(deletes[1]!)).text();
    expect(lastConfirm).toContain('This is the only client secret');
    expect(lastConfirm).toContain('name="even_the_last" value="yes"');
    // A post that does not say so (a stale confirm page) is refused and deletes nothing.
    expect((await postOn(deletes[1]!, deletes[1]!)).status).toBe(409);
    expect(await verifyClientSecret(server.ctx, app.id, fresh.clientSecret)).toBe(true);
    expect((await postOn(deletes[1]!, deletes[1]!, { even_the_last: 'yes' })).status).toBe(303);
    expect(await verifyClientSecret(server.ctx, app.id, fresh.clientSecret)).toBe(false);
    expect(await (await browser.fetch(`/settings/applications/${app.id}`)).text()).toContain('has no client secret');
  });

  it('edits an app with the same validation as registering it', async () => {
    const app = await register('Editable');
    const edit = (fields: Record<string, string>) =>
      postOn(`/settings/applications/${app.id}`, `/settings/applications/${app.id}`, {
        name: 'Edited',
        description: 'New words',
        homepage: 'https://edited.example/',
        redirect_uri: 'https://edited.example/cb',
        ...fields,
      });
    const refused = await edit({ redirect_uri: 'https://edited.example/cb#frag' });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toMatch(/id="redirect_uri"[^>]*aria-invalid="true" aria-describedby="redirect_uri-error"/);
    expect(page).toContain('value="Edited"');
    expect((await findAppByClientId(server.ctx, app.clientId))!.name).toBe('Editable');

    const saved = await edit({});
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`/settings/applications/${app.id}?done=app-updated`);
    expect(await findAppByClientId(server.ctx, app.clientId)).toMatchObject({
      name: 'Edited',
      description: 'New words',
      homepage: 'https://edited.example/',
      redirect_uri: 'https://edited.example/cb',
    });
    expect(await verifyClientSecret(server.ctx, app.id, app.clientSecret)).toBe(true);
  });

  it('registers one app for one form, however often it is submitted (a one-time nonce)', async () => {
    const form = formFields(await (await browser.fetch('/settings/applications')).text());
    expect(form.form_nonce).toMatch(/^[\w-]{32}$/);
    const fields = {
      csrf_token: form.csrf_token!,
      form_nonce: form.form_nonce!,
      name: 'Once',
      description: '',
      homepage: 'https://once.example/',
      redirect_uri: 'https://once.example/cb',
    };
    const [a, b] = await Promise.all([
      browser.post('/settings/applications', fields),
      browser.post('/settings/applications', fields),
    ]);
    const again = await browser.post('/settings/applications', fields);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 303]);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toMatch(/^\/settings\/applications\/\d+\?done=app-already-registered$/);
    const rows = await server.ctx.db('applications').where({ name: 'Once' });
    expect(rows).toHaveLength(1);
    expect(await (await browser.fetch(again.headers.get('location')!)).text()).toContain(
      'This form was already submitted',
    );
    // A fresh form registers another.
    const fresh = formFields(await (await browser.fetch('/settings/applications')).text()).form_nonce!;
    expect(fresh).not.toBe(form.form_nonce);
    expect((await browser.post('/settings/applications', { ...fields, form_nonce: fresh })).status).toBe(200);
  });

  it('deletes an app, and the tokens it was granted stop working at once', async () => {
    const fixture = await createFixture(server.ctx.db);
    const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), fixture, 'user_info');
    const userinfo = () =>
      fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo()).status).toBe(200);

    const ownerBrowser = new Browser(server.baseUrl);
    await logIn(ownerBrowser, fixture.login, fixture.password);
    const app = await findAppByClientId(server.ctx, fixture.clientId);
    const res = await post(`/settings/applications/${app!.id}/delete`, {}, ownerBrowser);
    expect(res.status).toBe(303);
    expect(await findAppByClientId(server.ctx, fixture.clientId)).toBeUndefined();
    expect((await userinfo()).status).toBe(401);
  });

  it("answers 404 to viewing, editing, adding or deleting secrets of, or deleting another user's app, and changes nothing", async () => {
    const foreign = await createFixture(server.ctx.db);
    const app = await findAppByClientId(server.ctx, foreign.clientId);
    const [secret] = await server.ctx.db('client_secrets').where({ application_id: app!.id });
    expect((await browser.fetch(`/settings/applications/${app!.id}`)).status).toBe(404);
    expect((await browser.fetch(`/settings/applications/${app!.id}/secrets/${secret.id}/delete`)).status).toBe(404);
    expect(
      (
        await post(`/settings/applications/${app!.id}`, {
          name: 'Mine',
          description: '',
          homepage: 'https://m.example/',
          redirect_uri: 'https://m.example/cb',
        })
      ).status,
    ).toBe(404);
    expect((await post(`/settings/applications/${app!.id}/secrets`)).status).toBe(404);
    expect(
      (await post(`/settings/applications/${app!.id}/secrets/${secret.id}/delete`, { even_the_last: 'yes' })).status,
    ).toBe(404);
    expect((await post(`/settings/applications/${app!.id}/delete`)).status).toBe(404);
    const after = await findAppByClientId(server.ctx, foreign.clientId);
    expect(after!.name).toBe(foreign.appName);
    expect(await verifyClientSecret(server.ctx, app!.id, foreign.clientSecret)).toBe(true);
  });

  it('sets and clears "Require pushed authorization requests" on its own form; not on another user\'s app', async () => {
    const app = await register('Pushed');
    const required = async () =>
      Boolean((await findAppByClientId(server.ctx, app.clientId))!.require_pushed_authorization_requests);
    expect(await required()).toBe(false);
    const page = await (await browser.fetch(`/settings/applications/${app.id}`)).text();
    expect(page).toMatch(/<input type="checkbox" id="require_pushed_authorization_requests"[^>]*value="true">/);
    const set = await post(`/settings/applications/${app.id}/pushed-requests`, {
      require_pushed_authorization_requests: 'true',
    });
    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe(`/settings/applications/${app.id}?done=app-updated`);
    expect(await required()).toBe(true);
    expect(await (await browser.fetch(`/settings/applications/${app.id}`)).text()).toMatch(
      /id="require_pushed_authorization_requests"[^>]*checked>/,
    );
    // Editing the details leaves it alone; an unchecked box (nothing sent) clears it.
    await post(`/settings/applications/${app.id}`, {
      name: 'Pushed',
      description: 'Keeps notes',
      homepage: 'https://notes.example/',
      redirect_uri: 'https://notes.example/cb',
    });
    expect(await required()).toBe(true);
    expect((await post(`/settings/applications/${app.id}/pushed-requests`)).status).toBe(303);
    expect(await required()).toBe(false);

    const foreign = await createFixture(server.ctx.db);
    const other = (await findAppByClientId(server.ctx, foreign.clientId))!;
    const refused = await post(`/settings/applications/${other.id}/pushed-requests`, {
      require_pushed_authorization_requests: 'true',
    });
    expect(refused.status).toBe(404);
    expect(
      Boolean((await findAppByClientId(server.ctx, foreign.clientId))!.require_pushed_authorization_requests),
    ).toBe(false);
  });

  it('refuses a form without its CSRF token and changes nothing', async () => {
    const app = await register('Guarded');
    const res = await browser.post(`/settings/applications/${app.id}/delete`, {});
    expect(res.status).toBe(403);
    expect(await findAppByClientId(server.ctx, app.clientId)).toBeDefined();
  });
});
