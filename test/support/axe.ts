import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core (Deque's accessibility engine) run inside a page. Its source is evaluated through the
// DevTools protocol, which the page's CSP does not govern, so the page under test keeps its CSP.

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const WCAG21 = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Every violation on the page as `rule: target`, for a readable diff; [] when clean. Our pages are
 * held to WCAG 2.2 A/AA and axe's best practices; `wcagOnly` for a page whose markup is a
 * library's (Redoc), held to WCAG 2.1 A/AA alone (its JSON samples' 15 px expand buttons are
 * under 2.2's 24 px target size, and its heading order is its own).
 */
export async function axeViolations(page: Page, options: { wcagOnly?: boolean } = {}): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const tags = options.wcagOnly ? WCAG21 : [...WCAG21, 'wcag22aa', 'best-practice'];
  const violations = await page.evaluate(async (values) => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (
            context: Document,
            options: object,
          ) => Promise<{ violations: { id: string; nodes: { target: unknown[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values }, resultTypes: ['violations'] });
    return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${JSON.stringify(n.target)}`));
  }, tags);
  return violations;
}
