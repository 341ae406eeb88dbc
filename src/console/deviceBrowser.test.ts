import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, SCREEN_WIDTHS, scrollsSideways } from '../../test/support/chromium.ts';
import { axeViolations } from '../../test/support/axe.ts';
import { createFixture, type Fixture } from '../../test/support/oauthFlow.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';

// The device flow as its user meets it: the example CLI (examples/device-cli) runs as a child
// process against the live test server and prints a URL and a code; the user signs in and approves
// on /device in Chromium (every state of the page axe clean and fitting a phone); the CLI then
// prints what its token reads (the user, their access tokens and workflows). Nothing waits on a
// clock: each step waits for output or a page.

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Starts the CLI as its README says; `until` resolves once its output matches. */
function startCli(env: Record<string, string>) {
  const { BASE_URL: _vite, ...inherited } = process.env;
  const child: ChildProcess = spawn(process.execPath, ['examples/device-cli/cli.ts'], {
    cwd: root,
    env: { ...inherited, ...env },
  });
  let text = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    text += String(d);
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const until = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = text.match(pattern);
      if (match) return match;
      if (child.exitCode !== null) throw new Error(`the CLI exited with ${child.exitCode}:\n${text}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        child.once('exit', () => resolve());
      });
    }
  };
  return { child, until, exited, output: () => text };
}

describe('the device flow with the example CLI and a real browser', () => {
  let server: TestServer;
  let f: Fixture;
  let browser: Browser;
  let page: Page;
  let cli: ReturnType<typeof startCli> | undefined;
  let workflowId: string;

  beforeAll(async () => {
    server = await startTestServer();
    f = await createFixture(server.ctx.db);
    const { token } = await createAccessToken(server.ctx, {
      userId: f.userId,
      name: 'deploy bot',
      namespace: f.login,
      usageScenario: 'paid',
      permissions: ['workflows'],
    });
    // A workflow of the user, for the CLI to list with its OAuth token.
    const created = await fetch(`${server.baseUrl}/api/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ticket summariser', ...seedGraph() }),
    });
    expect(created.status).toBe(201);
    workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: 800 } });
  });

  afterAll(async () => {
    cli?.child.kill();
    await browser?.close();
    await server?.close();
  });

  async function checkPage(what: string): Promise<void> {
    for (const width of Object.values(SCREEN_WIDTHS)) {
      await page.setViewportSize({ width, height: 800 });
      expect(await scrollsSideways(page), `${what} at ${width}px`).toBe(false);
      expect(await axeViolations(page), `${what} at ${width}px`).toEqual([]);
    }
    await page.setViewportSize({ width: SCREEN_WIDTHS.desktop, height: 800 });
  }

  it('the CLI prints a code, the user approves it on /device after signing in, and the CLI lists what it was granted', async () => {
    cli = startCli({ BASE_URL: server.baseUrl, CLIENT_ID: f.clientId, CLIENT_SECRET: f.clientSecret });
    const [, userCode] = await cli.until(/enter the code ([A-Z]{4}-[A-Z]{4})/);
    const [, complete] = await cli.until(/\(or open (\S+)\)/);
    expect(complete).toBe(`${server.baseUrl}/device?user_code=${userCode}`);

    // Not signed in: the login page first, then back to the page with the code filled in.
    await page.goto(complete!);
    await page.waitForURL((u) => u.pathname === '/login');
    await page.fill('#login', f.login);
    await page.fill('#password', f.password);
    await page.click('button[type=submit]');
    await page.waitForURL((u) => u.pathname === '/device');
    expect(await page.inputValue('#user_code')).toBe(userCode);
    await checkPage('the code page');

    // A wrong code is told on the page, at its field.
    await page.fill('#user_code', 'BBBB-BBBB');
    await Promise.all([page.waitForLoadState('load'), page.click('#continue')]);
    expect(await page.locator('#user_code-error').textContent()).toContain('That code is not valid');
    expect(await page.getAttribute('#user_code', 'aria-invalid')).toBe('true');
    await checkPage('the wrong-code page');

    // The right one (typed in lower case): the code flow's consent, naming the app and the scopes.
    await page.fill('#user_code', userCode!.toLowerCase());
    await Promise.all([page.waitForURL((u) => u.pathname === '/device'), page.click('#continue')]);
    await expect.poll(() => page.locator('#allow').count()).toBe(1);
    expect(await page.locator('main').textContent()).toContain(f.appName);
    expect(await page.locator('.user-code').textContent()).toBe(userCode);
    await checkPage('the consent page');

    await Promise.all([page.waitForURL((u) => u.pathname === '/device/decision'), page.click('#allow')]);
    expect(await page.locator('h1').textContent()).toBe('Device connected');
    await checkPage('the done page');

    await cli.until(/Access tokens in \S+:\n- deploy bot/);
    await cli.until(/Workflows of \S+:\n- Ticket summariser \((wf_\S+)\)/);
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain(`Signed in as ${f.login}`);
    expect(cli.output()).toContain(`Workflows of ${f.login}:\n- Ticket summariser (${workflowId})\n`);
  }, 120_000);
});
