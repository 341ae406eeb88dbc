import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREEN_WIDTHS } from '../../test/support/chromium.ts';
import { openDemoConsole, type DemoConsole } from '../../test/support/demoConsole.ts';
import { compareScreenshot } from '../../test/support/visual.ts';

// The editor's canvas against reviewed images (test/screenshots/, test/support/visual.ts), at
// desktop and phone widths: the demo Triage workflow as the canvas lays it out (its nodes carry no
// `ui`, so the auto-layout places them), its branch outputs and edges labelled. The canvas alone
// is compared: the forms below it follow the contract's node schemas, which grow.

describe('the editor canvas against the reviewed images', () => {
  let demo: DemoConsole | undefined;
  beforeAll(async () => {
    demo = await openDemoConsole({ height: 900 });
  });
  afterAll(async () => {
    await demo?.close();
  });

  it.each(Object.entries(SCREEN_WIDTHS))('the Triage workflow on the canvas (%s)', async (device, width) => {
    const { page, server, seed } = demo!;
    const triage = seed.workflows.find((w) => w.name === 'Triage')!.id;
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${server.baseUrl}/workflows/${triage}/edit`);
    await page.waitForSelector('.react-flow__node');
    await page.waitForSelector('.react-flow__edge-text');
    // The view is fitted to the nodes once they are measured: two frames after that it stands still.
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const canvas = page.locator('.canvas');
    expect(await compareScreenshot(page, `canvas-${device}`, [], canvas)).toBeUndefined();
  });
});
