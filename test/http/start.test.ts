import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../support/db.ts';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<Response> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return res;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`not ready within 60 s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

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
    const res = await waitReady(`http://127.0.0.1:${port}/readyz`, child, output);
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
      await waitReady(`http://127.0.0.1:${env.PORT}/readyz`, child, output);
      if (round === 1) expect(output()).toContain('First start: demo data created');
      else expect(output()).not.toContain('First start');
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    }
  });
});
