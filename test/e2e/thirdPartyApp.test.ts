import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveService, type LiveService } from '../../contract-tests/liveService.ts';
import { adminCli, freePort } from '../support/processes.ts';
import { DEMO } from '../../src/accounts/seed.ts';
import { Browser as HttpBrowser, authorizeInBrowser, logIn } from '../support/oauthFlow.ts';

// The example third-party app (examples/third-party-app) walked in a real browser (Debian's
// chromium; playwright-core never downloads one) against the real service started as a process
// (`src/main.ts` on a fresh embedded PostgreSQL, with the demo data of `admin demo seed`). Both are real
// HTTP servers; the service on 127.0.0.1 and the app on localhost, so they keep separate cookies
// as two sites would. Nothing here waits on a clock: every step waits for a page or an element.

const root = fileURLToPath(new URL('../..', import.meta.url));
const artifacts = path.join(root, 'artifacts', 'e2e');
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const STEP_TIMEOUT_MS = 60_000;
const APP_NAME = 'Example Third-Party App';

/** Starts the example app as its README says, and resolves once it answers. */
async function startExampleApp(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  const { BASE_URL: _vite, ...inherited } = process.env;
  const child = spawn(process.execPath, ['examples/third-party-app/server.ts'], {
    cwd: root,
    env: { ...inherited, ...env },
  });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const url = `http://localhost:${env.PORT}/healthz`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the example app exited with ${child.exitCode}:\n${text}`);
    try {
      if ((await fetch(url)).ok) return { child, output: () => text };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function logInOnService(page: Page, login: string, password: string): Promise<void> {
  await page.fill('#login', login);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
}

describe('the example third-party app in a real browser', () => {
  let service: LiveService;
  let exampleApp: { child: ChildProcess; output: () => string } | undefined;
  let browser: Browser;
  let appUrl: string;
  /** The demo API key's raw value, printed once by the admin CLI: the app must never show it. */
  let rawApiKey: string;

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true });
    console.log(`screenshots of the browser end-to-end test: ${artifacts}`);
    // Demo data through the admin CLI: the service prints secrets only to a terminal, never to a log stream.
    service = await startLiveService({ DEMO: 'false' });
    expect(service.output()).not.toContain('sk_');
    rawApiKey = String(adminCli(service.env, 'demo', 'seed').api_key);
    expect(rawApiKey).toMatch(/^sk_\S{20,}$/);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs });

    // The developer registers the app in the service's settings, with the app's own callback
    // (the seeded demo app's redirect_uri is fixed at port 4000, which a test cannot count on).
    const appPort = await freePort();
    appUrl = `http://localhost:${appPort}`;
    const developer = await browser.newContext();
    const settings = await developer.newPage();
    settings.setDefaultTimeout(STEP_TIMEOUT_MS);
    await settings.goto(`${service.baseUrl}/login?return_to=${encodeURIComponent('/settings/applications')}`);
    await logInOnService(settings, DEMO.login, DEMO.password);
    await settings.waitForURL((u) => u.pathname === '/settings/applications');
    await settings.fill('#name', APP_NAME);
    await settings.fill('#description', 'The example app from examples/third-party-app.');
    await settings.fill('#homepage', appUrl);
    await settings.fill('#redirect_uri', `${appUrl}/callback`);
    await settings.click('form[action="/settings/applications"] button[type=submit]');
    const clientId = (await settings.textContent('#client-id'))!;
    const clientSecret = (await settings.textContent('#client-secret'))!;
    await developer.close();

    exampleApp = await startExampleApp({
      SERVICE_URL: service.baseUrl,
      CLIENT_ID: clientId,
      CLIENT_SECRET: clientSecret,
      PORT: String(appPort),
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (exampleApp && exampleApp.child.exitCode === null) {
      exampleApp.child.kill('SIGTERM');
      await new Promise((r) => exampleApp!.child.once('exit', r));
    }
    await service?.stop();
  }, 60_000);

  it('signs in with PKCE, shows the user, namespaces and tokens, gets an echo answer through a proxy token, and is refused after the user revokes the app', async () => {
    // 1. The user, in a fresh browser, signs in to the app through the service.
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const scriptErrors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && scriptErrors.push(`${m.text()} ${m.location().url}`));

    await page.goto(appUrl);
    await page.click('#sign-in');
    await page.waitForURL((u) => u.origin === service.baseUrl && u.pathname === '/login');
    await logInOnService(page, DEMO.login, DEMO.password);

    await page.waitForURL((u) => u.origin === service.baseUrl && u.pathname === '/oauth/authorize');
    const consent = new URL(page.url());
    expect(consent.searchParams.get('code_challenge_method')).toBe('S256');
    expect(consent.searchParams.get('state')).toBeTruthy();
    expect(await page.textContent('h1')).toBe(`Authorize ${APP_NAME}`);
    await page.screenshot({ path: path.join(artifacts, '1-consent.png'), fullPage: true });
    await page.click('#allow');

    // 2. Back in the app: the user, the namespaces (personal and organization), the tokens.
    await page.waitForURL((u) => u.origin === appUrl && u.pathname === '/');
    expect(await page.textContent('#user-login')).toBe(DEMO.login);
    expect(await page.textContent('#user-name')).toBe(DEMO.name);
    expect(await page.locator('#namespaces li code').allTextContents()).toEqual([DEMO.login, DEMO.orgNamespace]);
    const demoKey = page.locator('tr.token', { hasText: DEMO.apiKeyName });
    expect(await demoKey.count()).toBe(1);
    await page.screenshot({ path: path.join(artifacts, '2-app-signed-in.png'), fullPage: true });

    // 3. Pick the token: the app gets a proxy token (a JWT; shown by its header and expiry only).
    await demoKey.locator('button').click();
    await page.waitForSelector('#proxy-token-info');
    expect(await page.textContent('#proxy-token-name')).toBe(DEMO.apiKeyName);
    expect(await page.textContent('#proxy-token-info')).toMatch(
      /alg ES256.*expires at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/s,
    );

    // 4. Ask the gateway: the built-in echo model answers with the question.
    const question = 'Hello from the example app <b>escaped</b>';
    await page.fill('#prompt', question);
    await page.click('#ask');
    await page.waitForSelector('#answer');
    expect(await page.textContent('#answer')).toBe(question);
    await page.screenshot({ path: path.join(artifacts, '3-app-gateway-answer.png'), fullPage: true });
    const shown = await page.content();
    expect(shown).not.toContain(rawApiKey);
    expect(shown).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\./); // nor the proxy token itself

    // 5. The user revokes the app in the service's settings, in another tab of the same browser.
    const servicePage = await context.newPage();
    servicePage.setDefaultTimeout(STEP_TIMEOUT_MS);
    await servicePage.goto(`${service.baseUrl}/settings/authorizations`);
    await servicePage.locator('tr', { hasText: APP_NAME }).locator('a', { hasText: 'Revoke' }).click();
    await servicePage.locator('button.danger.confirm').click();
    await servicePage.waitForSelector('text=You have not authorized any application.');
    await servicePage.close();

    // 6. The app's next gateway call, with the proxy token it still holds, is refused: 401 shown.
    await page.fill('#prompt', 'Are you still there?');
    await page.click('#ask');
    await page.waitForSelector('#gateway-error');
    expect(await page.textContent('#gateway-error')).toMatch(/HTTP 401/);
    await page.screenshot({ path: path.join(artifacts, '4-app-refused-after-revocation.png'), fullPage: true });

    // And the app's sign-in itself is gone: the home page asks to sign in again.
    await page.goto(appUrl);
    expect(await page.textContent('#notice')).toMatch(/HTTP 401/);
    expect(await page.locator('#sign-in').count()).toBe(1);

    // No CSP violation or script error on the app's or the service's pages (a missing favicon is not one).
    expect(scriptErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
    await context.close();
  }, 240_000);

  it('refuses a callback whose state is not the one it sent, before any code exchange (RFC 6749 10.12)', async () => {
    const app = new HttpBrowser(appUrl);
    const start = await app.fetch('/login');
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);

    // A forged callback (an attacker's code with a made-up state) into this browser's sign-in.
    // It names our issuer (RFC 9207), so the state check is what refuses it.
    const iss = encodeURIComponent(service.baseUrl);
    const forged = await app.fetch(
      `/callback?code=oac_forged&state=${encodeURIComponent('not-' + authorize.searchParams.get('state'))}&iss=${iss}`,
    );
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/Sign-in failed[\s\S]*state/);
    // The sign-in in progress is dropped, and nobody is signed in.
    expect(
      (await app.fetch(`/callback?code=oac_forged&state=${authorize.searchParams.get('state')}&iss=${iss}`)).status,
    ).toBe(400);
    expect(await (await app.fetch('/')).text()).toContain('id="sign-in"');
  });

  it('shows a denied consent as a failed sign-in and signs nobody in', async () => {
    const app = new HttpBrowser(appUrl);
    const start = await app.fetch('/login');
    const user = new HttpBrowser(service.baseUrl);
    expect((await logIn(user, DEMO.login, DEMO.password)).status).toBe(303);
    const callback = await authorizeInBrowser(user, new URL(start.headers.get('location')!), 'deny');
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const landed = await app.fetch(callback.pathname + callback.search);
    expect(landed.status).toBe(400);
    expect(await landed.text()).toContain('access_denied');
    expect(await (await app.fetch('/')).text()).toContain('id="sign-in"');
  });
});
