import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { createFixture, PKCE } from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// A real browser (Debian's chromium, installed by scripts/chromium.sh; playwright-core never
// downloads one) logs in, sees the consent page and lands on the app's callback.

describe('authorization in a real browser', () => {
  let server: TestServer;
  let callback: Server;
  let callbackUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    // The third-party app's callback: a tiny local server that shows what it received.
    callback = createServer((req, res) => {
      const url = new URL(req.url!, 'http://127.0.0.1');
      res.setHeader('content-type', 'text/html');
      res.end(
        `<!doctype html><title>callback</title><p id="code">${url.searchParams.get('code') ?? ''}</p><p id="state">${url.searchParams.get('state') ?? ''}</p>`,
      );
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    callback?.closeAllConnections();
    await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
    await server?.close();
  });

  it('logs in, shows the consent page with the app name, allows, and lands on the callback with code and state', async () => {
    const f = await createFixture(server.ctx.db, callbackUrl);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`));

    const authorize = new URL('/oauth/authorize', server.baseUrl);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: callbackUrl,
      scope: 'user_info api_key',
      state: 'st-42',
      code_challenge: PKCE.challenge,
      code_challenge_method: 'S256',
    }).toString();
    await page.goto(authorize.toString());

    expect(new URL(page.url()).pathname).toBe('/login');
    // The login page names the app the user is signing in to.
    expect(await page.textContent('.continue-to')).toBe(`to continue to ${f.appName}`);
    await screenshot(page, 'oauth-login-for-app-desktop');
    await page.fill('#login', f.login);
    await page.fill('#password', f.password);
    await page.click('button[type=submit]');

    await page.waitForURL((url) => url.pathname === '/oauth/authorize');
    expect(await page.textContent('h1')).toBe(`Authorize ${f.appName}`);
    expect(await page.textContent('.app-description')).toBe('Reads your profile <for tests>');
    expect(await page.locator('.scopes li').count()).toBe(2);
    expect(await page.textContent('.app-meta')).toBe(
      `Registered by ${f.login} · Homepage: https://client.example.test/`,
    );
    for (const [device, width] of Object.entries(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `consent at ${width}px`).toBe(false);
      await screenshot(page, `oauth-consent-${device}`);
    }
    // Keyboard order starts at Allow.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('allow');

    await page.click('#allow');
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('code')).toMatch(/^oac_/);
    expect(landed.searchParams.get('state')).toBe('st-42');
    expect(await page.textContent('#state')).toBe('st-42');
    // No CSP violation or script error on our pages (a missing favicon is not one).
    expect(errors.filter((e) => !/favicon|404/.test(e))).toEqual([]);
    await page.close();
  });
});
