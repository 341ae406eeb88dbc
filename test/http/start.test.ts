import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeEmbeddedPostgresData } from '../../src/db/embedded.ts';
import { getOrCreateSecret } from '../../src/accounts/secrets.ts';
import { createSealer, kekId } from '../../src/shared/sealing.ts';
import { createTestDb, testDialects, type TestDb } from '../support/db.ts';
import { freePort, waitForReady } from '../support/processes.ts';
import { TEST_SECRETS_KEY } from '../support/secrets.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npm start` as a user types it, in its own process group (so a test can play the terminal's Ctrl-C). */
function npmStart(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let text = '';
  const { BASE_URL: _ignored, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const child = spawn('npm', ['start', '--silent'], { env: { ...inherited, ...env }, detached: true });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  return { child, output: () => text };
}

function start(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let text = '';
  const { BASE_URL: _ignored, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const child = spawn('sh', ['scripts/node.sh', 'src/main.ts'], {
    env: { ...inherited, NODE_ENV: 'production', ...env },
  });
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
    const { child, output } = start({
      DATABASE_URL: testDb.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      SECRETS_KEY: TEST_SECRETS_KEY,
    });
    cleanups.push(async () => void child.kill('SIGKILL'));
    const res = await waitForReady(`http://127.0.0.1:${port}/readyz`, child, output);
    expect(await res.json()).toMatchObject({ status: 'ok', checks: { database: 'ok' } });
    // Production: no known login. No demo data, no secret printed; the log says how to create the first owner.
    expect(output()).not.toMatch(/horse-battery-staple|sk_|cs_/);
    expect(output()).toMatch(/"msg":"No account yet: create the first owner with `npm run -s admin -- user create/);
    expect(await testDb.db('users').first('id')).toBeUndefined();
    const login = await (await fetch(`http://127.0.0.1:${port}/login`)).text();
    expect(login).toContain('No account exists yet');
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(output()).toContain('"msg":"stopped"');
  });

  it('stops with one line naming DATABASE_URL, the host and what to check when the database refuses connections (no stack)', async () => {
    const port = await freePort(); // nothing listens there
    const { child, output } = start({
      DATABASE_URL: `postgres://app:secret-pw@127.0.0.1:${port}/app`,
      PORT: String(await freePort()),
      SECRETS_KEY: TEST_SECRETS_KEY,
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output().trim()).toBe(
      `Cannot use the database at 127.0.0.1:${port} (DATABASE_URL): connection refused. Check that the database server is running and listening there, and check that DATABASE_URL names the right host and port.`,
    );
  });

  it('stops with one line naming PORT and HOST when the port is taken (no EADDRINUSE stack), before creating any demo data', async () => {
    const testDb: TestDb = await createTestDb('pg', { migrate: false });
    cleanups.push(() => testDb.destroy());
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    const { child, output } = start({
      NODE_ENV: 'development',
      DEMO: 'true',
      DATABASE_URL: testDb.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'warn',
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output().trim()).toBe(
      `Cannot listen on 127.0.0.1:${port} (PORT=${port}, HOST=127.0.0.1): another process is using that port. Stop it, or set PORT to a free port (e.g. PORT=3001).`,
    );
    // The next start, on a free port, creates the demo data and shows its secrets then.
    expect(await testDb.db('users').first('id')).toBeUndefined();
  });

  it('refuses to start on a bad setting, naming it', async () => {
    const { child, output } = start({ PORT: 'eighty', DATABASE_URL: 'redis://localhost' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output()).toMatch(/PORT: must be a whole number/);
    expect(output()).toMatch(/DATABASE_URL: must be a URL starting with mysql:\/\//);
  });

  it('refuses demo data in production, even when asked for with --demo', async () => {
    const child = spawn('sh', ['scripts/node.sh', 'src/main.ts', '--demo'], {
      env: {
        ...process.env,
        BASE_URL: '',
        NODE_ENV: 'production',
        SECRETS_KEY: TEST_SECRETS_KEY,
        DATABASE_URL: 'mysql://app:app@127.0.0.1:1/none',
      },
    });
    let text = '';
    child.stderr!.on('data', (d) => (text += d));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(text).toMatch(/DEMO: demo data \(a known login\) is never created in production/);
  });

  it('refuses to start in production without a key-encryption key, saying what to set', async () => {
    const { child, output } = start({ DATABASE_URL: 'mysql://app:app@127.0.0.1:1/none' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output()).toMatch(/SECRETS_KEY: required in production .*openssl rand -base64 32/);
  });

  it('exits 1 at start, in one line naming the key that sealed them, when SECRETS_KEY does not open the stored secrets (README "Key-encryption key")', async () => {
    const testDb: TestDb = await createTestDb('pg');
    cleanups.push(() => testDb.destroy());
    // A store whose session key another key-encryption key sealed (as a service on that key leaves it).
    const otherKey = randomBytes(32);
    await getOrCreateSecret({ db: testDb.db, sealer: createSealer(otherKey) }, 'session_key', () => 'a session key');
    const port = await freePort();
    const { child, output } = start({
      DATABASE_URL: testDb.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      SECRETS_KEY: TEST_SECRETS_KEY,
    });
    cleanups.push(async () => void child.kill('SIGKILL'));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output().trim()).toBe(
      `Cannot open the stored secrets: app_secrets.value:session_key was sealed with key-encryption key ${kekId(otherKey)}, which is neither SECRETS_KEY (${kekId(Buffer.from(TEST_SECRETS_KEY, 'base64'))}) nor in SECRETS_KEY_PREVIOUS`,
    );
  });

  it('`npm start` runs an embedded PostgreSQL from a private (mode 700) data directory, reuses its data, and stops node and PostgreSQL quietly on SIGTERM to its process and on Ctrl-C', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'oa-start-')); // mode 700: as root, PostgreSQL runs as an OS user who cannot enter it
    const dataDir = path.join(home, 'data');
    cleanups.push(async () => {
      await removeEmbeddedPostgresData(path.join(dataDir, 'pg'));
      await rm(home, { recursive: true, force: true });
    });
    const env = {
      NODE_ENV: 'development',
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(await freePort()),
    };
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const { child, output } = npmStart(env);
      cleanups.push(async () => void child.kill('SIGKILL'));
      await waitForReady(`http://127.0.0.1:${env.PORT}/readyz`, child, output);
      if (signal === 'SIGTERM') {
        // Seeded once it listens (a start refused its port creates nothing): announced just after.
        await expect.poll(output, { timeout: 10_000 }).toContain('First start: demo data created');
        // Said before the several seconds a first start takes, not after.
        expect(output().indexOf('first start: creating the embedded PostgreSQL database')).toBeLessThan(
          output().indexOf('"msg":"listening"'),
        );
      } else {
        expect(output()).not.toContain('First start');
        expect(output()).toContain('starting the embedded PostgreSQL');
      }
      // Its key-encryption key, generated on the first start, readable by its owner only.
      expect((await stat(path.join(dataDir, 'secrets.key'))).mode & 0o777).toBe(0o600);
      const postgresPid = Number((await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      expect(alive(postgresPid)).toBe(true);
      if (signal === 'SIGTERM') {
        // What a container runtime does to `CMD npm start`: signal the process npm started.
        const started = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' })
          .trim()
          .split(/\s+/)
          .map(Number);
        expect(started).toHaveLength(1);
        process.kill(started[0]!, 'SIGTERM');
      } else {
        process.kill(-child.pid!, 'SIGINT'); // a terminal's Ctrl-C: the whole foreground process group
      }
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(alive(postgresPid)).toBe(false);
      expect(output()).toContain('"msg":"stopped"');
      expect(output()).not.toMatch(/\n\s+at |"level":[56]0|Error/);
    }
  }, 180_000); // two first starts (initdb) of a real process: no speed claim, a loaded machine needs minutes
});
