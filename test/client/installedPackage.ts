// The client package as an integrator gets it: built, `npm pack`ed from client/, and installed from
// the tarball into an empty project (no workspace link, no TypeScript source).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const root = fileURLToPath(new URL('../..', import.meta.url));
// Plain Node of the integrator's kind (the machine's /usr/bin/node, Node 20 here): no TypeScript
// stripping, no flags.
export const plainNode = existsSync('/usr/bin/node') ? '/usr/bin/node' : process.execPath;
const { BASE_URL: _vite, ...env } = process.env; // vitest sets BASE_URL=/ for Vite

/** Builds and packs the client, installs the tarball in a new empty project; returns that project. */
export function installClientPackage(): string {
  execFileSync(process.execPath, ['scripts/build-client.ts'], { cwd: root, stdio: 'pipe' });
  const project = mkdtempSync(path.join(tmpdir(), 'oa-client-'));
  const tarball = execFileSync('npm', ['pack', path.join(root, 'client'), '--pack-destination', project, '--silent'], {
    cwd: project,
    encoding: 'utf8',
    env,
  })
    .trim()
    .split('\n')
    .pop()!;
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'integrator', private: true, type: 'module' }),
  );
  execFileSync('npm', ['install', `./${tarball}`, '--no-audit', '--no-fund', '--prefer-offline', '--silent'], {
    cwd: project,
    env,
    stdio: 'pipe',
  });
  return project;
}

/** Runs `source` as an ES module with plain Node in the project; its stdout parsed as JSON. */
export async function runInNode(project: string, name: string, source: string, args: string[]): Promise<unknown> {
  writeFileSync(path.join(project, name), source);
  // Asynchronously: the service runs in this process and must keep answering.
  const { stdout } = await promisify(execFile)(plainNode, [name, ...args], { cwd: project, encoding: 'utf8' });
  return JSON.parse(stdout);
}

/** tsc over `files` of the project with the given options; its output ('' when clean). */
export function typeCheck(project: string, files: string[], compilerOptions: Record<string, unknown>): string {
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        noEmit: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        types: [],
        ...compilerOptions,
      },
      files,
    }),
  );
  try {
    return execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: project,
      encoding: 'utf8',
    });
  } catch (err) {
    return (err as { stdout: string }).stdout;
  }
}
