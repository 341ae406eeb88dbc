// `npm run -s check:contract` (part of `npm run lint`): the contract's versioning rules
// (contract-tests/versionRules.ts) against the last release. Each release's openapi.yaml is kept in
// the repository as contract-tests/releases/openapi-X.Y.Z.yaml, so the check needs neither tags
// nor history (CI clones without tags); the git tag `contract-vX.Y.Z`, where present, must carry
// the same file. oasdiff (the Go module, built once by `go install` from the Go module proxy into
// .tools/oasdiff-VERSION/) lists the breaking changes since that release;
// contract-tests/oasdiff-levels.txt makes a renamed operationId or a removed schema breaking too
// (generated clients name methods and classes after them). Writes a JUnit report to
// artifacts/contract/ and exits 1 when a rule fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import {
  checkContract,
  compareVersions,
  parseVersion,
  withOpenSets,
  type Check,
  type Finding,
} from '../contract-tests/versionRules.ts';

const OASDIFF_VERSION = 'v1.36.0';
const root = fileURLToPath(new URL('..', import.meta.url));
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

function oasdiff(): string {
  const dir = path.join(root, `.tools/oasdiff-${OASDIFF_VERSION}`);
  const bin = path.join(dir, 'oasdiff');
  if (!existsSync(bin)) {
    const built = spawnSync('go', ['install', `github.com/oasdiff/oasdiff@${OASDIFF_VERSION}`], {
      cwd: root,
      env: { ...process.env, GOBIN: dir },
      encoding: 'utf8',
    });
    if (built.status !== 0) throw new Error(`go install oasdiff failed:\n${built.stderr}`);
  }
  return bin;
}

const RELEASES = 'contract-tests/releases';
const tryGit = (...args: string[]) => {
  const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
};

/** The newest release kept in contract-tests/releases/ (openapi-X.Y.Z.yaml). */
function lastRelease(): { tag: string; version: string; file: string } {
  const versions = readdirSync(path.join(root, RELEASES))
    .map((f) => /^openapi-(.+)\.yaml$/.exec(f)?.[1])
    .filter((v): v is string => v !== undefined && parseVersion(v) !== undefined)
    .sort((a, b) => compareVersions(parseVersion(b)!, parseVersion(a)!));
  if (versions.length === 0)
    throw new Error(`no released contract in ${RELEASES}/ (openapi-X.Y.Z.yaml): CHANGELOG.md, rule 7`);
  const version = versions[0]!;
  return { tag: `contract-v${version}`, version, file: `${RELEASES}/openapi-${version}.yaml` };
}

/** Where the tag exists here, it must name the same openapi.yaml as the kept release file. */
function tagMismatch(release: { tag: string; file: string }, base: string): string | undefined {
  const tagged = tryGit('show', `${release.tag}:openapi.yaml`);
  return tagged !== undefined && tagged.trim() !== base.trim()
    ? `${release.file} differs from the openapi.yaml of tag ${release.tag}`
    : undefined;
}

/** Changes to openapi.yaml since the release that CHANGELOG.md does not record (Facts.unrecorded):
 * the commits after the one that added the release file. In a clone without that history (a
 * shallow one) only the working tree is checked; the `## Unreleased` rule still holds. */
function unrecorded(releaseFile: string, changelog: string): string[] {
  const added = tryGit('log', '--diff-filter=A', '--format=%H', '-1', '--', releaseFile);
  const commits = added
    ? git('log', '--format=%H %s', `${added}..HEAD`, '--', 'openapi.yaml').split('\n').filter(Boolean)
    : [];
  const missing = commits
    .filter((line) => {
      const hash = line.slice(0, 40);
      const touched = git('show', '--format=', '--name-only', hash).split('\n');
      return !touched.includes('CHANGELOG.md') && !changelog.includes(hash.slice(0, 7));
    })
    .map((line) => `${line.slice(0, 7)} ${line.slice(41, 101)}`);
  const dirty = (file: string) => spawnSync('git', ['diff', '--quiet', 'HEAD', '--', file], { cwd: root }).status === 1;
  if (dirty('openapi.yaml') && !dirty('CHANGELOG.md')) missing.push('working tree');
  return missing;
}

function junit(checks: Check[]): string {
  const esc = (s: string) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const cases = checks.map((c) =>
    c.failure
      ? `  <testcase classname="contract.versions" name="${esc(c.name)}">\n    <failure message="failed">${esc(c.failure)}</failure>\n  </testcase>`
      : `  <testcase classname="contract.versions" name="${esc(c.name)}"/>`,
  );
  const failures = checks.filter((c) => c.failure).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="contract versions" tests="${checks.length}" failures="${failures}">\n${cases.join('\n')}\n</testsuite>\n`;
}

function gather() {
  const release = lastRelease();
  const spec = readFileSync(path.join(root, 'openapi.yaml'), 'utf8');
  const base = readFileSync(path.join(root, release.file), 'utf8');
  const mismatch = tagMismatch(release, base);
  if (mismatch) throw new Error(mismatch);
  const changelog = readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
  const out = execFileSync(
    oasdiff(),
    [
      'breaking',
      path.join(root, release.file),
      path.join(root, 'openapi.yaml'),
      '--format',
      'json',
      '--severity-levels',
      path.join(root, 'contract-tests/oasdiff-levels.txt'),
    ],
    { encoding: 'utf8' },
  );
  return {
    version: String((parse(spec) as { info: { version: unknown } }).info.version),
    release,
    breaking: withOpenSets((JSON.parse(out || '[]') ?? []) as Finding[]),
    specChanged: spec.trim() !== base.trim(),
    changelog,
    unrecorded: unrecorded(release.file, changelog),
    clientVersion: (JSON.parse(readFileSync(path.join(root, 'client/package.json'), 'utf8')) as { version: string })
      .version,
  };
}

/**
 * oasdiff's default rules (no levels file, no open sets) between each release and the next, and
 * from the last release to openapi.yaml: each error they find must be explained in CHANGELOG.md,
 * on a line that names its rule id and its operation (and says which test proves it harmless).
 */
function defaultRuleFindings(changelog: string): Check {
  const versions = readdirSync(path.join(root, RELEASES))
    .map((f) => /^openapi-(.+)\.yaml$/.exec(f)?.[1])
    .filter((v): v is string => v !== undefined && parseVersion(v) !== undefined)
    .sort((a, b) => compareVersions(parseVersion(a)!, parseVersion(b)!));
  const files = [...versions.map((v) => `${RELEASES}/openapi-${v}.yaml`), 'openapi.yaml'];
  const unexplained: string[] = [];
  for (let i = 1; i < files.length; i++) {
    const out = execFileSync(
      oasdiff(),
      ['breaking', path.join(root, files[i - 1]!), path.join(root, files[i]!), '--format', 'json'],
      { encoding: 'utf8' },
    );
    for (const f of ((JSON.parse(out || '[]') ?? []) as Finding[]).filter((x) => x.level >= 3)) {
      const operation = `${f.operation ?? ''} ${f.path ?? ''}`.trim();
      const explained = changelog.split('\n').some((line) => line.includes(f.id) && line.includes(`${operation} `));
      if (!explained) unexplained.push(`${files[i - 1]} -> ${files[i]}: ${operation}: ${f.text} [${f.id}]`);
    }
  }
  return {
    name: "oasdiff's default rules across every release: each error explained in CHANGELOG.md",
    ...(unexplained.length
      ? {
          failure: `explain each on a line of CHANGELOG.md naming its rule id and operation, with the test that proves it harmless (or fix it):\n${unexplained.join('\n')}`,
        }
      : {}),
  };
}

/**
 * Rule 6: what a response carries stays open, so a later minor version can add to it. No schema
 * a response reaches closes its object (`additionalProperties: false`) or picks among typed
 * objects by a `discriminator` (a later branch would be one an earlier client cannot decode).
 */
function responsesOpen(specText: string): Check {
  const spec = parse(specText) as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
    components: Record<string, Record<string, unknown>>;
  };
  const closed = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (node: unknown, where: string): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const n = node as Record<string, unknown>;
    if (typeof n.$ref === 'string') {
      const [, , kind, name] = n.$ref.split('/');
      return walk(spec.components[kind!]?.[name!], name!);
    }
    if (n.additionalProperties === false) closed.add(`${where}: additionalProperties: false`);
    if (n.discriminator) closed.add(`${where}: a discriminator`);
    for (const [key, value] of Object.entries(n)) if (key !== 'example' && key !== 'examples') walk(value, where);
  };
  for (const [route, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item))
      walk(operation?.responses, `${method.toUpperCase()} ${route}`);
  }
  return {
    name: 'rule 6: every schema a response reaches is open (no additionalProperties: false, no discriminator)',
    ...(closed.size ? { failure: [...closed].join('\n') } : {}),
  };
}

let checks: Check[];
try {
  const facts = gather();
  checks = [
    ...checkContract(facts),
    defaultRuleFindings(facts.changelog),
    responsesOpen(readFileSync(path.join(root, 'openapi.yaml'), 'utf8')),
  ];
  const warnings = facts.breaking.filter((f) => f.level < 3);
  // Warnings (a value added to an open enum, say) are allowed in a minor version: shown, not failed.
  for (const w of warnings) console.log(`note: ${w.operation ?? ''} ${w.path ?? ''}: ${w.text} [${w.id}]`);
  console.log(
    `contract ${facts.version}, last release ${facts.release.tag}: ${facts.breaking.length - warnings.length} breaking, ${warnings.length} warning(s)`,
  );
} catch (err) {
  checks = [{ name: 'contract versions: oasdiff against the last release', failure: (err as Error).message }];
}
mkdirSync(path.join(root, 'artifacts/contract'), { recursive: true });
writeFileSync(path.join(root, 'artifacts/contract/junit.xml'), junit(checks));
for (const c of checks) console.log(`${c.failure ? 'FAIL' : 'ok  '} ${c.name}${c.failure ? `\n${c.failure}` : ''}`);
process.exit(checks.some((c) => c.failure) ? 1 : 0);
