import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../../test/support/axe.ts';
import { launchChromium, logInPage, screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createUser } from '../accounts/users.ts';

// Self-service accounts: sign-up on by default in development only (SIGNUP), refused with a page
// that says so when off; the login page links to it and, in development with demo data, says
// where the demo login was printed.

describe('sign-up in a real browser (development: on by default)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer({ env: { NODE_ENV: 'development', DEMO: 'true' } });
    await createUser(server.ctx, { login: 'taken', password: 'test-password-1' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the login page links to sign-up and says where the demo login was printed', async () => {
    await page.goto(`${server.baseUrl}/login`);
    expect(await page.textContent('main')).toContain(
      "the demo account's login and password (demo / horse-battery-staple) were printed by npm start in its terminal on the first start",
    );
    await page.click('a[href="/signup"]');
    await page.waitForURL((url) => url.pathname === '/signup');
  });

  it('refuses a taken login and a short password at their fields, then creates the account and signs it in', async () => {
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.baseUrl}/signup`);
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
      await screenshot(page, `signup-${device}`);
    }
    await page.fill('#login', 'Taken');
    await page.fill('#password', 'long enough password');
    await page.click('button[type=submit]');
    await page.waitForSelector('#login-error');
    expect(await page.getAttribute('#login', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#login-error')).toMatch(/taken/);
    expect(await axeViolations(page)).toEqual([]);

    await page.fill('#login', 'newcomer');
    await page.fill('#password', 'short');
    // The browser's own check (minlength) is bypassed to reach the service's.
    await page.$eval('form[action="/signup"]', (f) => f.setAttribute('novalidate', ''));
    await page.click('button[type=submit]');
    await page.waitForSelector('#password-error');
    expect(await page.textContent('#password-error')).toMatch(/at least 12 characters/i);
    expect(await page.inputValue('#login')).toBe('newcomer');
    // OWASP ASVS V2.1.7: a breached password, and one that contains the login, are refused too.
    await page.fill('#password', 'Password1234');
    await page.click('button[type=submit]');
    await page.waitForSelector('#password-error');
    expect(await page.textContent('#password-error')).toMatch(/most common passwords, found in data breaches/i);
    await page.fill('#password', 'i am the NewComer here');
    await page.click('button[type=submit]');
    await page.waitForSelector('#password-error');
    expect(await page.textContent('#password-error')).toMatch(/must not contain your login/i);

    await page.fill('#password', 'long enough password');
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/workflows');
    expect(await page.textContent('header')).toContain('newcomer');
  });

  it('a password change needs the current password, ends every other session of the user and keeps this one', async () => {
    const elsewhere = await browser.newPage();
    await logInPage(elsewhere, server.baseUrl, 'newcomer', 'long enough password', '/workflows');
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
    await page.click('header nav a[href="/settings/password"]');
    await page.fill('#current_password', 'not it at all');
    await page.fill('#new_password', 'a new long password');
    await page.click('button.primary');
    await page.waitForSelector('#current_password-error');
    expect(await page.getAttribute('#current_password', 'aria-invalid')).toBe('true');
    for (const width of Object.values(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `at ${width}px`).toBe(false);
      expect(await axeViolations(page), `at ${width}px`).toEqual([]);
    }
    await page.fill('#current_password', 'long enough password');
    await page.fill('#new_password', 'a new long password');
    await page.click('button.primary');
    await page.waitForURL((url) => url.searchParams.get('done') === 'password-changed');
    expect(await page.textContent('[role=status]')).toMatch(/^Password changed\./);
    // This browser is still signed in; the other one is not.
    await page.goto(`${server.baseUrl}/workflows`);
    expect(new URL(page.url()).pathname).toBe('/workflows');
    await elsewhere.goto(`${server.baseUrl}/workflows`);
    expect(new URL(elsewhere.url()).pathname).toBe('/login');
    await logInPage(elsewhere, server.baseUrl, 'newcomer', 'a new long password', '/workflows');
    await elsewhere.close();
  });
});

describe('sign-up turned off (the default outside development)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('GET and POST /signup answer 404 with a page saying the operator creates accounts; the login page does not link to it', async () => {
    const get = await fetch(`${server.baseUrl}/signup`);
    expect(get.status).toBe(404);
    expect(await get.text()).toContain('Accounts on this service are created by its operator.');
    const post = await fetch(`${server.baseUrl}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'login=x&password=yyyyyyyyyy',
    });
    expect(post.status).toBe(404);
    expect(await server.ctx.db('users').where({ login: 'x' }).first()).toBeUndefined();
    const login = await (await fetch(`${server.baseUrl}/login`)).text();
    expect(login).not.toContain('href="/signup"');
    expect(login).not.toContain('horse-battery-staple');
  });
});
