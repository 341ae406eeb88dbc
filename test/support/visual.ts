import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import type { Locator, Page } from 'playwright-core';

// Screenshot tests: a page's picture against a reviewed image kept in the repo
// (test/screenshots/<name>.png), compared pixel by pixel with a tolerance (pixelmatch: a colour
// distance per pixel, then a share of differing pixels), so anti-aliasing noise passes and a moved
// or restyled element fails. Parts that change from run to run (ids, dates) are masked.
// UPDATE_SCREENSHOTS=1 writes the pictures instead (review them in the diff before committing);
// a missing reference fails, so CI never accepts a picture nobody looked at.

const DIR = fileURLToPath(new URL('../screenshots/', import.meta.url));
/** Share of pixels that may differ (after pixelmatch's per-pixel threshold of 0.1). */
const MAX_DIFF_RATIO = 0.01;

/** `undefined` when the page matches its reference; otherwise why not (a diff image is kept under artifacts/screenshots/). */
export async function compareScreenshot(
  page: Page,
  name: string,
  mask: Locator[] = [],
  /** One element's picture instead of the whole page's (a part others' changes around it leave alone). */
  element?: Locator,
): Promise<string | undefined> {
  const options = { animations: 'disabled', caret: 'hide', mask, maskColor: '#888888' } as const;
  const shot = element ? await element.screenshot(options) : await page.screenshot({ ...options, fullPage: true });
  const file = path.join(DIR, `${name}.png`);
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    await mkdir(DIR, { recursive: true });
    await writeFile(file, shot);
    return undefined;
  }
  if (!existsSync(file))
    return `no reference image ${path.relative(process.cwd(), file)}: run with UPDATE_SCREENSHOTS=1, review it and commit it`;
  const expected = PNG.sync.read(await readFile(file));
  const actual = PNG.sync.read(shot);
  if (expected.width !== actual.width || expected.height !== actual.height) {
    return `${name}: ${actual.width}x${actual.height}, the reference is ${expected.width}x${expected.height}`;
  }
  const diff = new PNG({ width: actual.width, height: actual.height });
  const differing = pixelmatch(expected.data, actual.data, diff.data, actual.width, actual.height, { threshold: 0.1 });
  const ratio = differing / (actual.width * actual.height);
  if (ratio <= MAX_DIFF_RATIO) return undefined;
  await mkdir('artifacts/screenshots', { recursive: true });
  await writeFile(`artifacts/screenshots/${name}-actual.png`, shot);
  await writeFile(`artifacts/screenshots/${name}-diff.png`, PNG.sync.write(diff));
  return `${name}: ${(ratio * 100).toFixed(2)}% of pixels differ (at most ${MAX_DIFF_RATIO * 100}%); see artifacts/screenshots/${name}-diff.png`;
}
