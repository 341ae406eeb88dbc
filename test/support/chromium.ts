import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';

// Debian's chromium (scripts/chromium.sh installs it; playwright-core never downloads one) and
// screenshots kept as CI artifacts under artifacts/e2e/.

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });

export const SCREEN_WIDTHS = { desktop: 1280, phone: 390 } as const;

/** A full-page screenshot at artifacts/e2e/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir('artifacts/e2e', { recursive: true });
  await page.screenshot({ path: `artifacts/e2e/${name}.png`, fullPage: true });
}

/** Whether the page scrolls sideways (wider content than the viewport). */
export const scrollsSideways = (page: Page): Promise<boolean> =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

/** Logs in through the login form. */
export async function logInPage(
  page: Page,
  baseUrl: string,
  login: string,
  password: string,
  returnTo = '/settings/applications',
): Promise<void> {
  await page.goto(`${baseUrl}/login?return_to=${encodeURIComponent(returnTo)}`);
  await page.fill('#login', login);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.pathname === returnTo);
}

/** The centre of what `selector` first finds, once it stands still (a redraw may move it, a view may pan). */
export async function steadyCentre(page: Page, selector: string): Promise<{ x: number; y: number }> {
  const at = async () => {
    const box = (await page.locator(selector).first().boundingBox())!;
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };
  let last = await at();
  for (;;) {
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const now = await at();
    if (now.x === last.x && now.y === last.y) return now;
    last = now;
  }
}
