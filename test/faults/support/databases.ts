// Databases the fault tests own: their own MariaDB server and their own embedded PostgreSQL, each
// on its own port and data directory, so a test can stop one (an outage) and start it again
// without touching the shared test databases.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../../src/db/embedded.ts';
import { freePort } from '../../support/processes.ts';

export interface OwnDatabase {
  /** URL of a database the application may use (created on first start). */
  url: string;
  /** Stops the server (an outage); data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  destroy(): Promise<void>;
  /** Freezes the server (SIGSTOP: its port still accepts connections, nothing answers); MariaDB only. */
  pause?(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume?(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** True when `mariadbd` and `mariadb-install-db` are installed (scripts/mariadb.sh installs them). */
export function mariadbAvailable(): boolean {
  return (
    spawnSync('sh', ['-c', 'command -v mariadbd && command -v mariadb-install-db'], { encoding: 'utf8' }).status === 0
  );
}

/** A MariaDB server of our own (mariadbd on a free port, data in a temporary directory). */
export async function startOwnMariaDb(): Promise<OwnDatabase> {
  const root = process.getuid?.() === 0;
  const dir = await mkdtemp(path.join(tmpdir(), 'fault-mariadb-'));
  await chmod(dir, 0o755);
  const data = path.join(dir, 'data');
  const socket = path.join(dir, 'mysqld.sock');
  const port = await freePort();
  const userArgs = root ? ['--user=mysql'] : [];
  const install = spawnSync(
    'mariadb-install-db',
    [...userArgs, `--datadir=${data}`, '--auth-root-authentication-method=socket'],
    { encoding: 'utf8' },
  );
  if (install.status !== 0) throw new Error(`mariadb-install-db failed: ${install.stderr}`);
  if (root) {
    const { uid, gid } = idsOf('mysql');
    await chown(dir, uid, gid);
  }

  let child: ChildProcess | undefined;
  const ping = () => spawnSync('mariadb-admin', [`--socket=${socket}`, 'ping'], { encoding: 'utf8' }).status === 0;
  const start = async () => {
    child = spawn(
      'mariadbd',
      [
        ...userArgs,
        `--datadir=${data}`,
        `--socket=${socket}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        '--skip-name-resolve',
        '--innodb-flush-log-at-trx-commit=2',
        `--pid-file=${path.join(dir, 'mysqld.pid')}`,
        '--character-set-server=utf8mb4',
        `--log-error=${path.join(dir, 'error.log')}`,
      ],
      { stdio: 'ignore' },
    );
    // The service connects over TCP, not the socket: the server is up once our own child answers
    // both (the port comes from freePort(), which another process may take before mariadbd binds it).
    const deadline = Date.now() + 30_000;
    while (!(ping() && (await accepts(port)) && child.exitCode === null)) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`mariadbd did not start on port ${port} (see ${dir}/error.log)`);
      await sleep(100);
    }
  };
  const stop = async () => {
    if (!child) return;
    if (child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    // An outage only if nothing answers on the service's port any more.
    if (await accepts(port)) throw new Error(`port ${port} still accepts connections after mariadbd stopped`);
  };
  await start();
  const sql = `CREATE USER IF NOT EXISTS 'app'@'127.0.0.1' IDENTIFIED BY 'app'; CREATE DATABASE IF NOT EXISTS app;
    GRANT ALL ON *.* TO 'app'@'127.0.0.1'; FLUSH PRIVILEGES;`;
  const created = spawnSync('mariadb', [`--socket=${socket}`, '-e', sql], { encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`could not create the app user: ${created.stderr}`);
  return {
    url: `mysql://app:app@127.0.0.1:${port}/app`,
    start,
    stop,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async destroy() {
      child?.kill('SIGCONT');
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function idsOf(user: string): { uid: number; gid: number } {
  const out = spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim();
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim();
  return { uid: Number(out), gid: Number(gid) };
}

/** An embedded PostgreSQL of our own (its own port and data directory), persistent across stop/start. */
export async function startOwnPostgres(): Promise<OwnDatabase> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fault-pg-'));
  await chmod(dir, 0o755); // the cluster runs as its own OS user when we are root
  const dataDir = path.join(dir, 'pg');
  const port = await freePort();
  let handle: EmbeddedPostgresHandle | undefined;
  const start = async () => {
    handle = await startEmbeddedPostgres({ dataDir, port, database: 'app', persistent: true });
  };
  const stop = async () => {
    await handle?.stop();
    handle = undefined;
  };
  await start();
  return {
    url: handle!.url,
    start,
    stop,
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
