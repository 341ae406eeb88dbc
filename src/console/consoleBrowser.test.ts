import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, logInPage, screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { createFixture } from '../../test/support/oauthFlow.ts';
import { insertAuthorization } from '../oauth/authorizations.store.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { createApp } from '../accounts/apps.ts';
import { createUser } from '../accounts/users.ts';

// The settings pages in a real browser, at desktop and phone widths: the current page is marked
// in the nav, nothing scrolls sideways, a refused form names its fields for assistive technology.

describe('settings pages in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let fixture: Awaited<ReturnType<typeof createFixture>>;
  const errors: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    const f = await createFixture(server.ctx.db);
    fixture = f;
    // Long values: the tables must wrap them on a phone rather than scroll.
    await createApp(server.ctx, {
      ownerUserId: f.userId,
      name: 'A notes app with a rather long name',
      description: 'Keeps notes in sync across every device you own',
      homepage: 'https://notes.example/',
      redirectUri: 'https://notes.example/oauth/callback/with/a/long/path',
    });
    await createAccessToken(server.ctx, {
      userId: f.userId,
      name: 'deploy bot',
      namespace: f.login,
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: 800 } });
    page.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`));
    await logInPage(page, server.baseUrl, f.login, f.password);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const pages = [
    ['applications', '/settings/applications', 'Applications'],
    ['tokens', '/settings/tokens', 'Access tokens'],
    ['authorizations', '/settings/authorizations', 'Authorized apps'],
    ['organizations', '/settings/organizations', 'Organizations'],
  ] as const;

  it.each(pages)(
    '%s: marks its nav link as the current page, fits a phone without sideways scrolling, axe clean',
    async (name, path, label) => {
      for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${server.baseUrl}${path}`);
        expect(await page.locator('nav a[aria-current=page]').allTextContents()).toEqual([label]);
        expect(await scrollsSideways(page), `${path} at ${width}px`).toBe(false);
        expect(await axeViolations(page), `${path} at ${width}px`).toEqual([]);
        await screenshot(page, `settings-${name}-${device}`);
      }
      expect(errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    },
  );

  it('a refused registration marks the bad field aria-invalid and describes it with the message', async () => {
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    await page.goto(`${server.baseUrl}/settings/applications`);
    await page.fill('#name', 'Broken');
    await page.fill('#homepage', 'https://broken.example/');
    // A URL the browser accepts but the service refuses (a fragment).
    await page.fill('#redirect_uri', 'https://broken.example/cb#frag');
    await page.click('button.primary');
    await page.waitForSelector('[role=alert]');
    const field = page.locator('#redirect_uri');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const describedBy = await field.getAttribute('aria-describedby');
    expect(await page.locator(`#${describedBy}`).textContent()).toMatch(/fragment/);
    expect(await page.locator('#name').getAttribute('aria-invalid')).toBeNull();
    expect(await page.inputValue('#name')).toBe('Broken');
    await screenshot(page, 'settings-applications-error-desktop');
  });

  it('deleting an app asks first (a confirm page whose red button posts the CSRF-protected form), then says it is done', async () => {
    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 800 });
    await page.goto(`${server.baseUrl}/settings/applications`);
    const row = page.locator('tr', { hasText: 'A notes app with a rather long name' });
    await row.locator('a.danger', { hasText: 'Delete' }).click();
    await page.waitForURL((url) => url.pathname.endsWith('/delete'));
    expect(await page.textContent('h1')).toBe('Delete A notes app with a rather long name?');
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, 'settings-applications-confirm-delete-phone');
    // Cancel leaves it in place.
    await page.click('text=Cancel');
    await page.waitForURL((url) => url.pathname === '/settings/applications');
    expect(await page.locator('tr', { hasText: 'A notes app with a rather long name' }).count()).toBe(1);

    await page.locator('tr', { hasText: 'A notes app with a rather long name' }).locator('a.danger').click();
    await page.click('button.danger.confirm');
    await page.waitForURL((url) => url.pathname === '/settings/applications');
    expect(await page.textContent('[role=status]')).toMatch(/^Application deleted\./);
    expect(await page.locator('tr', { hasText: 'A notes app with a rather long name' }).count()).toBe(0);
    await screenshot(page, 'settings-applications-deleted-phone');
  });

  it('deleting a token asks first and then says so', async () => {
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    await page.goto(`${server.baseUrl}/settings/tokens`);
    await page.locator('tr', { hasText: 'deploy bot' }).locator('a.danger').click();
    expect(await page.textContent('h1')).toBe('Delete deploy bot?');
    await screenshot(page, 'settings-tokens-confirm-delete-desktop');
    await page.click('button.danger.confirm');
    await page.waitForURL((url) => url.pathname === '/settings/tokens');
    expect(await page.textContent('[role=status]')).toMatch(/^Access token deleted\./);
    expect(await page.locator('tr', { hasText: 'deploy bot' }).count()).toBe(0);
  });

  it('an app page: two client secrets during a rotation, the old one deleted behind a confirm page, an edit form that names its errors; fits a phone', async () => {
    const { app } = await createApp(server.ctx, {
      ownerUserId: fixture.userId,
      name: 'Rotating app',
      description: 'Changes secrets',
      homepage: 'https://rot.example/',
      redirectUri: 'https://rot.example/oauth/callback',
    });
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    await page.goto(`${server.baseUrl}/settings/applications`);
    await page.locator('tr', { hasText: 'Rotating app' }).locator('a', { hasText: 'Settings' }).click();
    await page.waitForURL((url) => url.pathname === `/settings/applications/${app.id}`);
    expect(await page.locator('nav a[aria-current=page]').allTextContents()).toEqual(['Applications']);
    expect(await page.locator('table.secrets tbody tr').count()).toBe(1);

    await page.click('#generate-secret');
    await page.waitForSelector('#client-secret');
    expect(await page.textContent('#client-secret')).toMatch(/^cs_/);
    expect(await page.textContent('main')).toContain('The previous secret keeps working');
    await page.click('text=Done: back to the application');
    expect(await page.locator('table.secrets tbody tr').count()).toBe(2);
    expect(await page.locator('#generate-secret').count()).toBe(0);
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `app page at ${width}px`).toBe(false);
      await screenshot(page, `settings-application-two-secrets-${device}`);
    }

    await page.locator('table.secrets tr', { hasText: 'Client secret 1' }).locator('a.danger').click();
    expect(await page.textContent('h1')).toBe('Delete client secret 1 of Rotating app?');
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, 'settings-application-confirm-delete-secret-phone');
    await page.click('button.danger.confirm');
    await page.waitForURL((url) => url.pathname === `/settings/applications/${app.id}`);
    expect(await page.textContent('[role=status]')).toMatch(/^Client secret deleted\./);
    expect(await page.locator('table.secrets tbody tr').count()).toBe(1);

    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    await page.fill('#name', '');
    await page.fill('#name', 'Renamed app');
    await page.fill('#redirect_uri', 'http://rot.example/cb'); // plain http off loopback: refused
    await page.click('text=Update application');
    await page.waitForSelector('[role=alert]');
    expect(await page.locator('#redirect_uri').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#redirect_uri-error').textContent()).toMatch(/https/);
    expect(await page.inputValue('#name')).toBe('Renamed app');
    await screenshot(page, 'settings-application-edit-error-desktop');
    await page.fill('#redirect_uri', 'https://rot.example/cb');
    await page.click('text=Update application');
    await page.waitForSelector('[role=status]');
    expect(await page.textContent('h1')).toBe('Renamed app');
    expect(errors.filter((e) => !/favicon|status of 40[09]/.test(e))).toEqual([]);
  });

  it('keyboard order starts at the main action: the first Tab stop leads to it', async () => {
    const { app } = await createApp(server.ctx, {
      ownerUserId: fixture.userId,
      name: 'Keyboard app',
      description: '',
      homepage: 'https://k.example/',
      redirectUri: 'https://k.example/cb',
    });
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    // A page without an action of its own (no app authorized yet): the skip link leads to its text.
    const withoutAction = [['/settings/authorizations', 'main']] as const;
    const mainActions = [
      ['/settings/applications', 'name'],
      [`/settings/applications/${app.id}`, 'generate-secret'],
      [`/settings/applications/${app.id}/delete`, 'confirm'],
      ['/settings/tokens', 'name'],
      ['/settings/organizations', 'namespace'],
      ['/settings/authorizations', 'first-revoke'],
    ] as const;
    for (const [path, id] of [...withoutAction, ...mainActions]) {
      if (id === 'first-revoke')
        await insertAuthorization(server.ctx.db, fixture.userId, app.id, 'user_info', Date.now());
      await page.goto(`${server.baseUrl}${path}`);
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.className), path).toBe('skip-link');
      expect(await page.locator('.skip-link').isVisible()).toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id), { message: path }).toBe(id);
    }
    // The authorized app's Revoke link is the one the skip link reached.
    await page.goto(`${server.baseUrl}/settings/authorizations`);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/settings/authorizations/${app.id}/revoke`);
    await page.goto(`${server.baseUrl}/settings/applications`);
    await page.keyboard.press('Tab');
    await screenshot(page, 'settings-applications-skip-link-desktop');
  });

  it('organizations: create one, add a member by username, remove them behind a confirm page; tokens show their namespace; fits a phone', async () => {
    const member = await createUser(server.ctx, { login: `member${Date.now() % 100000}`, password: 'test-password-1' });
    await page.setViewportSize({ width: SCREEN_WIDTHS.phone, height: 800 });
    await page.goto(`${server.baseUrl}/settings/organizations`);
    await page.fill('#namespace', 'Acme-Research-Laboratories');
    await page.fill('#name', 'Acme Research Laboratories');
    await page.click('button:has-text("Create organization")');
    await page.waitForURL((url) => url.pathname === '/settings/organizations/acme-research-laboratories');
    expect(await page.textContent('[role=status]')).toMatch(/^Organization created\./);
    await page.fill('#login', 'nobody-at-all');
    await page.click('button:has-text("Add member")');
    await page.waitForSelector('#login-error');
    expect(await page.locator('#login').getAttribute('aria-invalid')).toBe('true');
    await page.fill('#login', member.login);
    await page.click('button:has-text("Add member")');
    await page.waitForSelector('[role=status]');
    expect(await page.locator('tbody tr').count()).toBe(2);
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, 'settings-organization-members-phone');
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    await screenshot(page, 'settings-organization-members-desktop');

    await page.locator('tr', { hasText: member.login }).locator('a.danger').click();
    expect(await page.textContent('h1')).toBe(`Remove ${member.login} from Acme Research Laboratories?`);
    await screenshot(page, 'settings-organization-confirm-remove-desktop');
    await page.click('button.danger.confirm');
    await page.waitForURL((url) => url.pathname === '/settings/organizations/acme-research-laboratories');
    expect(await page.textContent('[role=status]')).toMatch(/^Member removed\./);
    expect(await page.locator('tbody tr').count()).toBe(1);

    // A token in the org's namespace: the tokens list says where it lives.
    await page.goto(`${server.baseUrl}/settings/tokens`);
    await page.fill('#name', 'acme key');
    await page.selectOption('#namespace', 'acme-research-laboratories');
    await page.selectOption('#expires_in_days', '30');
    await page.click('button:has-text("Create token")');
    await page.waitForSelector('#access-token');
    await page.click('text=Back to access tokens');
    const row = page.locator('tr', { hasText: 'acme key' });
    expect(await row.textContent()).toContain('acme-research-laboratories');
    expect(await row.textContent()).toMatch(/Expires \d{4}-/);
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page)).toBe(false);
      await screenshot(page, `settings-tokens-with-expiry-${device}`);
    }
    expect(errors.filter((e) => !/favicon|status of 40[09]/.test(e))).toEqual([]);
  });

  it('a Copy button puts the client ID on the clipboard', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    await page.goto(`${server.baseUrl}/settings/applications`);
    const clientId = await page.locator('code[data-copy]').first().textContent();
    await page.locator('button.copy').first().click();
    await expect.poll(() => page.locator('button.copy').first().textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(clientId);
    expect(errors.filter((e) => !/favicon|status of 400/.test(e))).toEqual([]);
  });
});
