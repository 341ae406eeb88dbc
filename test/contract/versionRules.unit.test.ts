// The contract's versioning rules (CHANGELOG.md's header), as CI applies them to oasdiff's findings.
import { describe, expect, it } from 'vitest';
import { changelogSection, checkContract, parseVersion, type Facts } from '../../contract-tests/versionRules.ts';

const changelog = (unreleased: string) =>
  `# Changelog\n\n## Unreleased\n${unreleased}\n## [1.0.0] - 2026-11-24\n\n- The first stable release.\n`;
const breaking = {
  id: 'request-parameter-enum-value-removed',
  level: 3,
  text: 'removed the enum value `plain`',
  operation: 'GET',
  path: '/oauth/authorize',
};
const warning = {
  id: 'response-property-enum-value-added',
  level: 2,
  text: 'added the new `paused` enum value',
  operation: 'GET',
  path: '/api/workflows/{workflow_id}/runs/{run_id}',
};
const facts = (over: Partial<Facts> = {}): Facts => ({
  version: '1.0.0',
  release: { tag: 'contract-v1.0.0', version: '1.0.0' },
  breaking: [],
  specChanged: false,
  changelog: changelog(''),
  clientVersion: '1.0.0',
  unrecorded: [],
  ...over,
});
const failures = (f: Facts) =>
  checkContract(f)
    .filter((c) => c.failure)
    .map((c) => c.name);

describe('contract versioning rules', () => {
  it('passes the released contract as tagged', () => {
    expect(checkContract(facts())).toHaveLength(5);
    expect(failures(facts())).toEqual([]);
  });

  it('accepts only MAJOR.MINOR.PATCH release versions', () => {
    expect(parseVersion('1.2.3')).toEqual({ major: 1, minor: 2, patch: 3 });
    for (const v of ['0.1', '1.0.0-rc.1', '01.0.0', 'v1.0.0']) expect(parseVersion(v)).toBeUndefined();
    expect(failures(facts({ version: '1.0' }))).toEqual([
      expect.stringContaining('semver'),
      expect.stringContaining('CHANGELOG'),
      expect.stringContaining('client package'),
    ]);
  });

  it('fails a breaking change under the same major version, and names it', () => {
    const checks = checkContract(
      facts({
        version: '1.1.0',
        breaking: [breaking],
        specChanged: true,
        changelog: changelog('') + '\n## [1.1.0]\n- plain removed\n',
        clientVersion: '1.1.0',
      }),
    );
    const failed = checks.filter((c) => c.failure);
    expect(failed.map((c) => c.name)).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
    expect(failed[0]!.failure).toContain('GET /oauth/authorize: removed the enum value `plain`');
  });

  it('allows a breaking change once the major version moved', () => {
    expect(
      failures(
        facts({
          version: '2.0.0',
          breaking: [breaking],
          specChanged: true,
          changelog: changelog('') + '\n## [2.0.0]\n- plain removed\n',
          clientVersion: '2.0.0',
        }),
      ),
    ).toEqual([]);
  });

  it('allows a warning (a value added to an open enum) in a minor version', () => {
    expect(
      failures(facts({ breaking: [warning], specChanged: true, changelog: changelog('- RunStatus: `paused`.') })),
    ).toEqual([]);
  });

  it("takes a new node type (a oneOf branch of a workflow's nodes) as a warning, any other new oneOf branch as breaking (rule 3)", () => {
    const nodeType = {
      id: 'response-property-one-of-added',
      level: 3,
      operation: 'GET',
      path: '/api/workflows/{workflow_id}',
      text: 'added `#/components/schemas/SwitchNode` to the `data/nodes/items` response property `oneOf` list for the response status `200`',
    };
    const listed = {
      ...nodeType,
      path: '/api/workflows',
      text: 'added `#/components/schemas/SwitchNode` to the `data/items/nodes/items` response property `oneOf` list for the response status `200`',
    };
    const other = {
      ...nodeType,
      text: 'added `#/components/schemas/Other` to the `data/error` response property `oneOf` list for the response status `200`',
    };
    const inConfig = {
      ...nodeType,
      text: 'added `#/components/schemas/Other` to the `data/nodes/items/config/x` response property `oneOf` list for the response status `200`',
    };
    const changed = (breaking: Facts['breaking']) =>
      facts({ breaking, specChanged: true, changelog: changelog('- SwitchNode.') });
    expect(failures(changed([nodeType, listed]))).toEqual([]);
    expect(failures(changed([other]))).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
    expect(failures(changed([inConfig]))).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
  });

  it("takes the token endpoint's refresh_token becoming optional (a token exchange's answer only) as a warning, any other field as breaking", () => {
    const optional = (path: string, field: string) => ({
      id: 'response-property-became-optional',
      level: 3,
      text: `the response property \`${field}\` became optional for the status \`200\``,
      operation: 'POST',
      path,
    });
    expect(failures(facts({ breaking: [optional('/api/open/oauth/token', 'refresh_token')] }))).toEqual([]);
    expect(failures(facts({ breaking: [optional('/api/open/oauth/token', 'scope')] }))).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
    expect(failures(facts({ breaking: [optional('/api/open/oauth/revoke', 'refresh_token')] }))).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
  });

  it("takes the token endpoint's token_type losing its const Bearer (DPoP's answer only) as a warning, elsewhere as breaking", () => {
    const constRemoved = (path: string, field: string) => ({
      id: 'response-property-const-removed',
      level: 3,
      text: `the \`${field}\` response property const value \`Bearer\` was removed for the status \`200\``,
      operation: 'POST',
      path,
    });
    expect(failures(facts({ breaking: [constRemoved('/api/open/oauth/token', 'token_type')] }))).toEqual([]);
    expect(failures(facts({ breaking: [constRemoved('/api/open/oauth/token', 'scope')] }))).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
    expect(failures(facts({ breaking: [constRemoved('/api/open/oauth/introspect', 'token_type')] }))).toEqual([
      'no breaking change since contract-v1.0.0 unless the major version moved',
    ]);
  });

  it('fails a changed openapi.yaml with no line under Unreleased', () => {
    const failed = checkContract(facts({ specChanged: true })).filter((c) => c.failure);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.failure).toContain("add a line under '## Unreleased'");
  });

  it('fails a new version without its own section, and a version below the release', () => {
    expect(
      failures(
        facts({ version: '1.1.0', specChanged: true, changelog: changelog('- something'), clientVersion: '1.1.0' }),
      ),
    ).toEqual([expect.stringContaining('CHANGELOG')]);
    expect(failures(facts({ version: '0.9.0', clientVersion: '0.9.0' }))).toContain(
      'info.version is a semver release version, not below the last release',
    );
  });

  it('fails a change to openapi.yaml whose commit did not touch CHANGELOG.md, and names the commit', () => {
    const failed = checkContract(
      facts({
        specChanged: true,
        changelog: changelog('- something else'),
        unrecorded: ['b6466ce RFC 7009 revocation of a proxy token'],
      }),
    ).filter((c) => c.failure);
    expect(failed.map((c) => c.name)).toEqual([
      'every change to openapi.yaml since the release changed CHANGELOG.md in the same commit',
    ]);
    expect(failed[0]!.failure).toContain('b6466ce RFC 7009');
  });

  it("fails a client package whose version is not the contract's", () => {
    expect(failures(facts({ clientVersion: '0.1.0' }))).toEqual([
      "the client package (client/package.json) carries the contract's version",
    ]);
  });

  it('reads a section of CHANGELOG.md up to the next heading', () => {
    expect(changelogSection(changelog('- a\n- b'), /^Unreleased$/)).toBe('- a\n- b');
    expect(changelogSection(changelog(''), /^\[2\.0\.0\]/)).toBeUndefined();
  });
});
