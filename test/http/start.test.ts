import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../support/db.ts';
import { freePort, waitForReady } from '../support/processes.ts';

function start(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let text = '';
  const { BASE_URL: _ignored, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const child = spawn('sh', ['scripts/node.sh', 'src/main.ts'], { env: { ...inherited, NODE_ENV: 'production', ...env } });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  return { child, output: () => text };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('npm start (src/main.ts as a real process)', () => {
  it.each(testDialects())('migrates a %s store, serves /readyz 200 and stops cleanly on SIGTERM', async (dialect) => {
    const testDb: TestDb = await createTestDb(dialect, { migrate: false });
    cleanups.push(() => testDb.destroy());
    const port = await freePort();
    const { child, output } = start({ DATABASE_URL: testDb.url, PORT: String(port), HOST: '127.0.0.1' });
    cleanups.push(async () => void child.kill('SIGKILL'));
    const res = await waitForReady(`http://127.0.0.1:${port}/readyz`, child, output);
    expect(await res.json()).toMatchObject({ status: 'ok', checks: { database: 'ok' } });
    expect(output()).toContain('demo / demo-password'); // first start seeds and prints the demo login once
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(output()).toContain('"msg":"stopped"');
  });

  it('refuses to start on a bad setting, naming it', async () => {
    const { child, output } = start({ PORT: 'eighty', DATABASE_URL: 'redis://localhost' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output()).toMatch(/PORT: must be a whole number/);
    expect(output()).toMatch(/DATABASE_URL: must be a URL starting with mysql:\/\//);
  });

  it('starts an embedded PostgreSQL when DATABASE_URL is unset, and reuses its data on a second start', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'oa-start-'));
    await chmod(dataDir, 0o755); // as root, the cluster runs as its own OS user, which must reach it
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const env = { DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1', EMBEDDED_PG_PORT: String(await freePort()) };
    for (const round of [1, 2]) {
      const { child, output } = start(env);
      cleanups.push(async () => void child.kill('SIGKILL'));
      await waitForReady(`http://127.0.0.1:${env.PORT}/readyz`, child, output);
      if (round === 1) expect(output()).toContain('First start: demo data created');
      else expect(output()).not.toContain('First start');
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    }
  });
});
