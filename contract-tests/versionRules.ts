// The contract's versioning rules (CHANGELOG.md's header states them for people), as pure checks
// over what scripts/contract-versions.ts gathers: info.version, the last release's version,
// oasdiff's breaking changes since that tag, CHANGELOG.md and the client package's version.

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

/** A release version as semver 2.0.0 writes it (no pre-release or build part: releases only). */
export function parseVersion(text: string): Version | undefined {
  const m = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** One oasdiff finding, as `oasdiff breaking --format json` prints it (level 3 = error, 2 = warning). */
export interface Finding {
  id: string;
  level: number;
  text: string;
  operation?: string;
  path?: string;
}

export interface Facts {
  /** info.version of openapi.yaml. */
  version: string;
  /** The last release: its tag (`contract-vX.Y.Z`) and the version it names. */
  release: { tag: string; version: string };
  /** oasdiff's breaking changes from the release's openapi.yaml to this one. */
  breaking: Finding[];
  /** Whether openapi.yaml differs from the release's at all (descriptions included). */
  specChanged: boolean;
  changelog: string;
  clientVersion: string;
  /** Commits since the release that changed openapi.yaml but neither CHANGELOG.md nor have their
   * hash named in it (and `working tree` when the uncommitted openapi.yaml differs from HEAD's
   * while CHANGELOG.md does not). */
  unrecorded: string[];
}

export interface Check {
  name: string;
  failure?: string;
}

/** The text under `## <heading>` of CHANGELOG.md, up to the next `## `. */
export function changelogSection(changelog: string, heading: RegExp): string | undefined {
  const lines = changelog.split('\n');
  const start = lines.findIndex((l) => l.startsWith('## ') && heading.test(l.slice(3)));
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

const hasEntry = (section: string | undefined) => section !== undefined && /^\s*[-*] \S/m.test(section);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const describe = (f: Finding) => `${f.operation ?? ''} ${f.path ?? ''}: ${f.text} [${f.id}]`.trim();

/**
 * The lists whose `oneOf` is an open set by rule 3 of CHANGELOG.md: a workflow's nodes, one branch
 * per node type (1.0.0 already said "new node types come in minor versions" of `RunStep.node_type`,
 * and `WorkflowNode` says **Open**). A branch added there is a new node type, which a client meets
 * only in a workflow made with it: a warning, as a value added to an open enum is. Any other
 * `oneOf` stays closed.
 */
const OPEN_ONE_OF = /to the `(?:[\w-]+\/)*nodes\/items` response property `oneOf` list/;

/**
 * Response fields that changed only for a request no earlier release could make, named one by one
 * (finding, operation, path and field); any other such change stays breaking:
 * - the token endpoint's `refresh_token` is left out of a token exchange's answer alone (RFC 8693
 *   2.2.1), a `grant_type` value that the TokenRequest enum of every earlier release lacks;
 * - its `token_type` is `DPoP` only for a request with a `DPoP` proof header (RFC 9449 5), a header
 *   no earlier release had; every other answer is still `Bearer`.
 * So every answer a client of an earlier release can elicit is as it was.
 */
const CHANGED_FOR_NEW_REQUESTS_ONLY = [
  {
    id: 'response-property-became-optional',
    operation: 'POST',
    path: '/api/open/oauth/token',
    field: /^the response property `refresh_token` became optional/,
  },
  {
    id: 'response-property-const-removed',
    operation: 'POST',
    path: '/api/open/oauth/token',
    field: /^the `token_type` response property const value `Bearer` was removed/,
  },
];

const changedForNewRequestsOnly = (f: Finding) =>
  CHANGED_FOR_NEW_REQUESTS_ONLY.some(
    (o) => o.id === f.id && o.operation === f.operation && o.path === f.path && o.field.test(f.text),
  );

/** oasdiff's findings, with those that add to an open set (above) lowered to warnings. */
export function withOpenSets(findings: Finding[]): Finding[] {
  return findings.map((f) =>
    (f.id === 'response-property-one-of-added' && f.level >= 3 && OPEN_ONE_OF.test(f.text)) ||
    (f.level >= 3 && changedForNewRequestsOnly(f))
      ? { ...f, level: 2 }
      : f,
  );
}

export function checkContract(facts: Facts): Check[] {
  const version = parseVersion(facts.version);
  const released = parseVersion(facts.release.version);
  const checks: Check[] = [];
  const fail = (name: string, failure: string | undefined) => checks.push(failure ? { name, failure } : { name });

  fail(
    'info.version is a semver release version, not below the last release',
    !version
      ? `info.version '${facts.version}' is not MAJOR.MINOR.PATCH`
      : released && compareVersions(version, released) < 0
        ? `info.version ${facts.version} is below the release ${facts.release.tag}`
        : undefined,
  );

  const errors = withOpenSets(facts.breaking).filter((f) => f.level >= 3);
  const majorMoved = Boolean(version && released && version.major > released.major);
  fail(
    `no breaking change since ${facts.release.tag} unless the major version moved`,
    errors.length > 0 && !majorMoved
      ? `${errors.length} breaking change(s) since ${facts.release.tag} while info.version is ${facts.version}: make them compatible, or move the major version and record them in CHANGELOG.md:\n${errors.map(describe).join('\n')}`
      : undefined,
  );

  const newer = Boolean(version && released && compareVersions(version, released) > 0);
  const ownSection = changelogSection(facts.changelog, new RegExp(`^\\[?${escape(facts.version)}\\]?(\\s|$)`));
  const unreleased = changelogSection(facts.changelog, /^\[?Unreleased\]?\s*$/i);
  // Changed since the release under the same version: the change waits under '## Unreleased'
  // until a release names it; otherwise the version's own section must say what it holds.
  const pending = facts.specChanged && !newer;
  fail(
    `CHANGELOG.md records info.version ${facts.version} and every change since ${facts.release.tag}`,
    pending && !hasEntry(unreleased)
      ? `openapi.yaml differs from ${facts.release.tag}'s: add a line under '## Unreleased' in CHANGELOG.md saying what changed`
      : !hasEntry(ownSection)
        ? `CHANGELOG.md has no entry under '## [${facts.version}]'`
        : undefined,
  );

  fail(
    'every change to openapi.yaml since the release changed CHANGELOG.md in the same commit',
    facts.unrecorded.length > 0
      ? `openapi.yaml changed without a line in CHANGELOG.md (CHANGELOG.md, rule 1): ${facts.unrecorded.join('; ')}. Say what each changed under '## Unreleased', in the same commit; for a commit already on main, a later line that names its hash (7 characters) records it`
      : undefined,
  );

  fail(
    "the client package (client/package.json) carries the contract's version",
    facts.clientVersion !== facts.version
      ? `client/package.json says ${facts.clientVersion}, openapi.yaml ${facts.version}`
      : undefined,
  );
  return checks;
}
