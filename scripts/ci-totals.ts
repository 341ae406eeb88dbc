// `node scripts/ci-totals.ts [dir]`: sums every JUnit report under artifacts/ (vitest, the contract
// suites, schemathesis) and prints the whole run's totals as one plain line for CI's reader:
// `N passed, N failed, N skipped`. A suite's errors count as failures.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

function reports(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return reports(full);
    return e.name.endsWith('.xml') ? [full] : [];
  });
}

/** Counts <testcase> elements by outcome; a case holds at most one <failure>, <error> or <skipped>. */
export function countCases(xml: string): { passed: number; failed: number; skipped: number } {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const cases = xml.match(/<testcase\b[^>]*?(?:\/>|>[\s\S]*?<\/testcase>)/g) ?? [];
  for (const c of cases) {
    if (/<(failure|error)\b/.test(c)) totals.failed++;
    else if (/<skipped\b/.test(c)) totals.skipped++;
    else totals.passed++;
  }
  return totals;
}

const dir = process.argv[2] ?? 'artifacts';
const sum = { passed: 0, failed: 0, skipped: 0 };
for (const file of reports(dir)) {
  const t = countCases(readFileSync(file, 'utf8'));
  sum.passed += t.passed;
  sum.failed += t.failed;
  sum.skipped += t.skipped;
}
console.log(`${sum.passed} passed, ${sum.failed} failed, ${sum.skipped} skipped`);
