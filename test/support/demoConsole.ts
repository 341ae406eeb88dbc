import type { Browser, Page } from 'playwright-core';
import { createApiClient, type ApiClient } from '../../client/src/index.ts';
import { DEMO, seedDemo, type DemoSeed } from '../../src/accounts/seed.ts';
import { launchChromium, logInPage, SCREEN_WIDTHS } from './chromium.ts';
import { startTestServer, type TestServer } from './server.ts';

/** A service that runs workflows with the demo models, its demo data, and a Chromium page signed in as the demo user. */
export interface DemoConsole {
  server: TestServer;
  seed: DemoSeed;
  /** The API as the demo user's API key. */
  api: ApiClient;
  browser: Browser;
  page: Page;
  close(): Promise<void>;
}

/** `watch` sees the page before it signs in (a console-error listener, say). */
export async function openDemoConsole(
  options: { height?: number; watch?: (page: Page) => void } = {},
): Promise<DemoConsole> {
  const server = await startTestServer({ runs: true, env: { DEMO_MODELS: 'true' } });
  const seed = (await seedDemo(server.ctx))!;
  const api = createApiClient(server.baseUrl, { bearer: seed.apiKey.token });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: SCREEN_WIDTHS.desktop, height: options.height ?? 800 } });
  page.setDefaultTimeout(15_000);
  options.watch?.(page);
  await logInPage(page, server.baseUrl, DEMO.login, DEMO.password, '/workflows');
  return {
    server,
    seed,
    api,
    browser,
    page,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
