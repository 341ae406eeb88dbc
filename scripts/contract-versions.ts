// `npm run -s check:contract` (part of `npm run lint`): the contract's versioning rules
// (contract-tests/versionRules.ts) against the last release tag `contract-vX.Y.Z` reachable from
// HEAD. oasdiff (the Go module, built once by `go install` from the Go module proxy into
// .tools/oasdiff-VERSION/) lists the breaking changes since that release; contract-tests/oasdiff-levels.txt
// makes a renamed operationId or a removed schema breaking too (generated clients name methods and
// classes after them). Writes a JUnit report to
// artifacts/contract/ and exits 1 when a rule fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { checkContract, withOpenSets, type Check, type Finding } from '../contract-tests/versionRules.ts';

const OASDIFF_VERSION = 'v1.36.0';
const root = fileURLToPath(new URL('..', import.meta.url));
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

function oasdiff(): string {
  const dir = path.join(root, `.tools/oasdiff-${OASDIFF_VERSION}`);
  const bin = path.join(dir, 'oasdiff');
  if (!existsSync(bin)) {
    const built = spawnSync('go', ['install', `github.com/oasdiff/oasdiff@${OASDIFF_VERSION}`], { cwd: root, env: { ...process.env, GOBIN: dir }, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`go install oasdiff failed:\n${built.stderr}`);
  }
  return bin;
}

/** The newest `contract-vX.Y.Z` tag that HEAD contains. */
function lastRelease(): { tag: string; version: string } {
  const tags = git('tag', '--list', 'contract-v*', '--merged', 'HEAD', '--sort=-v:refname').split('\n').filter(Boolean);
  if (tags.length === 0) throw new Error('no release tag contract-vX.Y.Z is reachable from HEAD (a shallow clone without tags?): `git fetch --tags`');
  return { tag: tags[0]!, version: tags[0]!.slice('contract-v'.length) };
}

/** Changes to openapi.yaml since the release that CHANGELOG.md does not record (Facts.unrecorded). */
function unrecorded(tag: string, changelog: string): string[] {
  const commits = git('log', '--format=%H %s', `${tag}..HEAD`, '--', 'openapi.yaml').split('\n').filter(Boolean);
  const missing = commits.filter((line) => {
    const hash = line.slice(0, 40);
    const touched = git('show', '--format=', '--name-only', hash).split('\n');
    return !touched.includes('CHANGELOG.md') && !changelog.includes(hash.slice(0, 7));
  }).map((line) => `${line.slice(0, 7)} ${line.slice(41, 101)}`);
  const dirty = (file: string) => spawnSync('git', ['diff', '--quiet', 'HEAD', '--', file], { cwd: root }).status === 1;
  if (dirty('openapi.yaml') && !dirty('CHANGELOG.md')) missing.push('working tree');
  return missing;
}

function junit(checks: Check[]): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const cases = checks.map((c) => c.failure
    ? `  <testcase classname="contract.versions" name="${esc(c.name)}">\n    <failure message="failed">${esc(c.failure)}</failure>\n  </testcase>`
    : `  <testcase classname="contract.versions" name="${esc(c.name)}"/>`);
  const failures = checks.filter((c) => c.failure).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="contract versions" tests="${checks.length}" failures="${failures}">\n${cases.join('\n')}\n</testsuite>\n`;
}

function gather() {
  const release = lastRelease();
  const spec = readFileSync(path.join(root, 'openapi.yaml'), 'utf8');
  const base = git('show', `${release.tag}:openapi.yaml`) + '\n';
  const changelog = readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
  const tmp = mkdtempSync(path.join(tmpdir(), 'oasdiff-'));
  try {
    writeFileSync(path.join(tmp, 'base.yaml'), base);
    const out = execFileSync(oasdiff(), ['breaking', path.join(tmp, 'base.yaml'), path.join(root, 'openapi.yaml'), '--format', 'json', '--severity-levels', path.join(root, 'contract-tests/oasdiff-levels.txt')], { encoding: 'utf8' });
    return {
      version: String((parse(spec) as { info: { version: unknown } }).info.version),
      release,
      breaking: withOpenSets((JSON.parse(out || '[]') ?? []) as Finding[]),
      specChanged: spec.trim() !== base.trim(),
      changelog,
      unrecorded: unrecorded(release.tag, changelog),
      clientVersion: (JSON.parse(readFileSync(path.join(root, 'client/package.json'), 'utf8')) as { version: string }).version,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

let checks: Check[];
try {
  const facts = gather();
  checks = checkContract(facts);
  const warnings = facts.breaking.filter((f) => f.level < 3);
  // Warnings (a value added to an open enum, say) are allowed in a minor version: shown, not failed.
  for (const w of warnings) console.log(`note: ${w.operation ?? ''} ${w.path ?? ''}: ${w.text} [${w.id}]`);
  console.log(`contract ${facts.version}, last release ${facts.release.tag}: ${facts.breaking.length - warnings.length} breaking, ${warnings.length} warning(s)`);
} catch (err) {
  checks = [{ name: 'contract versions: oasdiff against the last release tag', failure: (err as Error).message }];
}
mkdirSync(path.join(root, 'artifacts/contract'), { recursive: true });
writeFileSync(path.join(root, 'artifacts/contract/junit.xml'), junit(checks));
for (const c of checks) console.log(`${c.failure ? 'FAIL' : 'ok  '} ${c.name}${c.failure ? `\n${c.failure}` : ''}`);
process.exit(checks.some((c) => c.failure) ? 1 : 0);
