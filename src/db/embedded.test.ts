import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded.ts';
import { createKnex } from './knex.ts';
import { freePort } from '../../test/support/processes.ts';

const exec = promisify(execFile);

describe('embedded PostgreSQL (the zero-setup default store)', () => {
  const dataDir = path.resolve('.data', `test-embedded-${process.pid}`);
  let running: EmbeddedPostgresHandle | undefined;
  let port: number;
  afterAll(async () => {
    await running?.stop();
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
    expect(await admin('user', 'create', '--login', 'kept', '--password', 'kept-password', '--name', 'Kept')).toMatchObject({ login: 'kept' });
  });

  it('keeps the data across a stop and a fresh start (here: by the admin CLI itself)', async () => {
    await running!.stop();
    running = undefined;
    const list = await admin('token', 'list', '--user', 'kept', '--namespace', 'kept');
    expect(list).toEqual({ data: [] });
  });
});
