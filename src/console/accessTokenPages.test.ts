import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { Browser, formFields, logIn } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { findUsableAccessTokenByPlaintext } from '../accounts/accessTokens.ts';
import { createOrg } from '../accounts/orgs.ts';
import { createUser } from '../accounts/users.ts';

// The settings page for raw access tokens: create (shown once), list, delete; CSRF on every form.

describe.each(testDialects())('access token settings page (%s)', (dialect) => {
  let server: TestServer;
  let browser: Browser;
  const shown: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    await createUser(server.ctx, { login: 'pat', password: 'test-password-1' });
    await createUser(server.ctx, { login: 'eve', password: 'test-password-1' });
    await createOrg(server.ctx, { namespace: 'pats-team', name: 'Team', ownerLogin: 'pat' });
    browser = new Browser(server.baseUrl);
    expect((await logIn(browser, 'pat', 'test-password-1')).status).toBe(303);
  });
  afterAll(async () => {
    for (const token of shown) expect(server.logs.join('\n')).not.toContain(token);
    await server?.close();
  });

  async function page(): Promise<string> {
    const res = await browser.fetch('/settings/tokens');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return res.text();
  }

  async function create(fields: Record<string, string>, permissions: string[] = []): Promise<Response> {
    const { csrf_token } = formFields(await page());
    const form = new URLSearchParams({ csrf_token: csrf_token!, ...fields });
    for (const p of permissions) form.append('permissions', p);
    return browser.fetch('/settings/tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
  }

  it('offers the user namespace and their organizations', async () => {
    const html = await page();
    expect(html).toContain('<option value="pat">pat</option>');
    expect(html).toContain('<option value="pats-team">pats-team</option>');
  });

  it('a fresh form has the workflows permission checked (an API key is for the workflows API; without it the first call is a 403)', async () => {
    expect(await page()).toContain('<input type="checkbox" name="permissions" value="workflows" checked>');
  });

  it('creates a token with name, namespace, usage_scenario and permissions, shows it once, then lists it without it', async () => {
    const res = await create({ name: 'CI key', namespace: 'pats-team', usage_scenario: 'paid' }, ['workflows']);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const token = /<code id="access-token">(sk_[\w-]{43})<\/code>/.exec(await res.text())![1]!;
    shown.push(token);
    const record = await findUsableAccessTokenByPlaintext(server.ctx, token);
    expect(record).toMatchObject({
      name: 'CI key',
      namespace: 'pats-team',
      usage_scenario: 'paid',
      permissions: ['workflows'],
    });

    const list = await page();
    expect(list).toContain('CI key');
    expect(list).toContain(record!.token_prefix);
    expect(list).not.toContain(token);
  });

  it('creates a token with an expiry, listed with it; refuses an expiry not offered, naming the field', async () => {
    const res = await create({ name: 'Week key', namespace: 'pat', usage_scenario: 'trial', expires_in_days: '30' });
    expect(res.status).toBe(200);
    const token = /<code id="access-token">(sk_[\w-]{43})<\/code>/.exec(await res.text())![1]!;
    shown.push(token);
    const record = await findUsableAccessTokenByPlaintext(server.ctx, token);
    expect(record!.expires_at! - record!.created_at).toBe(30 * 86_400_000);
    expect(await page()).toMatch(/Week key[\s\S]*Expires \d{4}-\d\d-\d\d/);
    for (const expires_in_days of ['0', '400', 'soon', '1.5']) {
      const refused = await create({ name: 'Bad expiry', namespace: 'pat', usage_scenario: 'paid', expires_in_days });
      expect(refused.status, expires_in_days).toBe(400);
      expect(await refused.text()).toMatch(
        /id="expires_in_days"[^>]*aria-invalid="true" aria-describedby="expires_in_days-error"/,
      );
    }
    // No expiry: the default.
    const forever = await create({
      name: 'Forever key',
      namespace: 'pat',
      usage_scenario: 'paid',
      expires_in_days: '',
    });
    const foreverToken = /<code id="access-token">(sk_[\w-]{43})<\/code>/.exec(await forever.text())![1]!;
    shown.push(foreverToken);
    expect((await findUsableAccessTokenByPlaintext(server.ctx, foreverToken))!.expires_at).toBeNull();
  });

  it('explains usage_scenario by when to pick each, tied to the field, with trial chosen for a fresh form (issue 35 item 5)', async () => {
    const html = await page();
    expect(html).toContain('aria-describedby="usage_scenario-help"');
    const help = /id="usage_scenario-help">([\s\S]*?)<\/p>/.exec(html)![1]!.replace(/<[^>]+>/g, '');
    // Not circular: no "paid: the paid edition"; each option says when to pick it, and a default is named.
    expect(help).not.toMatch(/paid: the paid|trial: the trial/);
    expect(help).toMatch(/paid: production use[^.]*\. Pick it when/);
    expect(help).toMatch(/trial: trying things out[^.]*\. Pick it when/);
    expect(help).toContain('Not sure? Keep trial');
    expect(html).toMatch(/<option value="trial" selected>/);
  });

  it('refuses a namespace the user cannot use, and an unknown usage scenario, with the form again (400)', async () => {
    const foreign = await create({ name: 'x', namespace: 'eve', usage_scenario: 'paid' });
    expect(foreign.status).toBe(400);
    const text = await foreign.text();
    expect(text).toContain('No namespace');
    expect(text).toMatch(/id="namespace"[^>]*aria-invalid="true"/);
    expect((await create({ name: 'x', namespace: 'pat', usage_scenario: 'free' })).status).toBe(400);
  });

  it('refuses create and delete without a valid CSRF token (403), changing nothing', async () => {
    const before = await server.ctx.db('access_tokens').count({ n: '*' }).first();
    const res = await browser.post('/settings/tokens', {
      csrf_token: 'forged',
      name: 'evil',
      namespace: 'pat',
      usage_scenario: 'paid',
    });
    expect(res.status).toBe(403);
    const id = (await server.ctx.db('access_tokens').first('id')).id;
    expect((await browser.post(`/settings/tokens/${id}/delete`, {})).status).toBe(403);
    expect(await server.ctx.db('access_tokens').count({ n: '*' }).first()).toEqual(before);
  });

  it('deletes the user own token; another user token is 404', async () => {
    const res = await create({ name: 'Temp', namespace: 'pat', usage_scenario: 'trial' });
    const token = /<code id="access-token">([^<]+)<\/code>/.exec(await res.text())![1]!;
    shown.push(token);
    const record = (await findUsableAccessTokenByPlaintext(server.ctx, token))!;
    const { csrf_token } = formFields(await page());
    const deleted = await browser.post(`/settings/tokens/${record.id}/delete`, { csrf_token: csrf_token! });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/settings/tokens?done=token-deleted');
    expect(await findUsableAccessTokenByPlaintext(server.ctx, token)).toBeUndefined();
    expect(await page()).not.toContain('Temp');

    const eve = new Browser(server.baseUrl);
    await logIn(eve, 'eve', 'test-password-1');
    const mine = (await server.ctx.db('access_tokens').first('id')).id;
    const eveCsrf = formFields(await (await eve.fetch('/settings/tokens')).text()).csrf_token!;
    expect((await eve.post(`/settings/tokens/${mine}/delete`, { csrf_token: eveCsrf })).status).toBe(404);
    expect(await server.ctx.db('access_tokens').where({ id: mine }).first()).toBeDefined();
  });

  it('sends a logged-out visitor to the login page', async () => {
    const res = await new Browser(server.baseUrl).fetch('/settings/tokens');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?return_to=%2Fsettings%2Ftokens');
  });
});
