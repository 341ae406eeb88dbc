import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The README walks a newcomer through the console near its top (sign in, create, run, watch), with
// the buttons named as the console names them.

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const workflowViews = readFileSync(new URL('../../src/console/views/workflows.ts', import.meta.url), 'utf8');

describe("the README's console walkthrough", () => {
  it('comes near the top and names the console’s own buttons', () => {
    const lines = readme.split('\n');
    const start = lines.findIndex((l) => l.startsWith('### Your first workflow, in the console'));
    expect(start).toBeGreaterThan(0);
    expect(start).toBeLessThan(60);
    const section = lines
      .slice(
        start,
        lines.findIndex((l, i) => i > start && l.startsWith('### ')),
      )
      .join('\n');
    for (const step of ['/login', 'New workflow', 'Save', 'Run workflow', "run's page"])
      expect(section).toContain(step);
    for (const button of ['New workflow', 'Run workflow']) expect(workflowViews).toContain(button);
  });
});
