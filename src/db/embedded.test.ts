import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeEmbeddedPostgresData, startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded.ts';
import { createKnex } from './knex.ts';
import { freePort } from '../../test/support/processes.ts';

const exec = promisify(execFile);

describe('embedded PostgreSQL (the zero-setup default store)', () => {
  const dataDir = path.resolve('.data', `test-embedded-${process.pid}`);
  let running: EmbeddedPostgresHandle | undefined;
  let port: number;
  afterAll(async () => {
    await running?.stop();
    await removeEmbeddedPostgresData(path.join(dataDir, 'pg'));
    await rm(dataDir, { recursive: true, force: true });
  });

  async function admin(...args: string[]) {
    const { stdout } = await exec('sh', ['scripts/node.sh', 'src/cli/admin.ts', ...args, '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port) },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  it('initialises a cluster with database app on first start', async () => {
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
    port = await freePort();
    running = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg'), port });
    expect(running.startedHere).toBe(true);
    expect(running.url).toMatch(new RegExp(`^postgres://postgres:.+@127\\.0\\.0\\.1:${port}/app$`));
    const db = createKnex(running.url);
    expect((await db.raw('select current_database() as name')).rows[0].name).toBe('app');
    await db.destroy();
  });

  it('lets the admin CLI use a cluster another process already runs, instead of starting a second', async () => {
    const second = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg'), port });
    expect(second.startedHere).toBe(false);
    expect(
      await admin('user', 'create', '--login', 'kept', '--password', 'k-e-p-t-password', '--name', 'Kept'),
    ).toMatchObject({ login: 'kept' });
  });

  it('keeps the data across a stop and a fresh start (here: by the admin CLI itself)', async () => {
    await running!.stop();
    running = undefined;
    const list = await admin('token', 'list', '--user', 'kept', '--namespace', 'kept');
    expect(list).toEqual({ data: [] });
  });
});

describe.runIf(process.getuid?.() === 0)('embedded PostgreSQL as root in a private (mode 700) directory', () => {
  it('runs the cluster as the postgres OS user from a postgres-owned mode-700 directory, and leaves no secret readable by others', async () => {
    const { lstat, readdir, readFile, stat, mkdtemp, realpath } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const tmpBefore = new Set(await readdir(tmpdir()));
    const home = await mkdtemp(path.join(tmpdir(), 'private-home-')); // mkdtemp: mode 700, owned by root
    const dataDir = path.join(home, 'app', '.data', 'pg');
    const pg = await startEmbeddedPostgres({ dataDir, port: await freePort() });
    try {
      const db = createKnex(pg.url);
      expect((await db.raw('select current_user as name')).rows[0].name).toBe('postgres');
      await db.destroy();
      expect((await lstat(dataDir)).isSymbolicLink()).toBe(true);
      const cluster = await stat(await realpath(dataDir));
      expect(cluster.mode & 0o777).toBe(0o700);
      expect(cluster.uid).not.toBe(0);
      expect((await stat(`${dataDir}.password`)).mode & 0o077).toBe(0);
      expect((await stat(path.dirname(dataDir))).mode & 0o077).toBe(0);
      // The password file initdb reads is gone, and no new file in /tmp holds the password.
      const password = (await readFile(`${dataDir}.password`, 'utf8')).trim();
      const added = (await readdir(tmpdir())).filter((f) => !tmpBefore.has(f));
      const holding = [];
      for (const f of added) {
        const text = await readFile(path.join(tmpdir(), f), 'utf8').catch(() => '');
        if (text.includes(password)) holding.push(f);
      }
      expect(holding).toEqual([]);
    } finally {
      await pg.stop();
      await removeEmbeddedPostgresData(dataDir);
      await rm(home, { recursive: true, force: true });
    }
  });
});
