// The processes of a bench run: MariaDB (scripts/mariadb.sh, default durability), a fresh embedded
// PostgreSQL for the queue, the service as an operator runs it, the load generator (bench/load.ts),
// and the bookkeeping that stops them all between runs.
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { freePort, waitForReady } from '../test/support/processes.ts';
import { startMariaDb } from './mariadb.ts';
import type { LoadResult, LoadSpec } from './types.ts';

export const root = fileURLToPath(new URL('..', import.meta.url));

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

/** Spawns a node script of the repository; the child is killed by cleanUp() if still running. */
export function spawnNode(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdio?: 'pipe' | ['ignore', 'pipe', 'inherit'] } = {},
): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: root, env: opts.env ?? process.env, stdio: opts.stdio ?? 'pipe' });
  children.push(child);
  return child;
}

/** A fresh PostgreSQL database `name` beside the one of `url`; its URL. */
export async function freshPgDatabase(url: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name}`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs `cleanup` at the end of this run, before those registered earlier (a stack). */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.unshift(cleanup);
}

export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch((err: unknown) => console.error(err));
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
}

export async function freshMysqlDatabase(url: string, name: string): Promise<string> {
  const conn = await mysql.createConnection(url);
  await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await conn.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface Stores {
  /** The service's store: database `bench` on a MariaDB of the bench's own (bench/mariadb.ts). */
  databaseUrl: string;
  mariadbPid: number;
  /** The queue: a fresh embedded PostgreSQL, removed at cleanUp(). */
  queueUrl: string;
}

export async function startStores(): Promise<Stores> {
  const mariadb = await startMariaDb();
  onCleanup(() => mariadb.stop());
  const databaseUrl = await freshMysqlDatabase(mariadb.url, 'bench');
  const pgDir = await mkdtemp(path.join(tmpdir(), 'oa-bench-pg-'));
  await chmod(pgDir, 0o755); // the cluster runs as its own OS user when we are root
  onCleanup(() => rm(pgDir, { recursive: true, force: true }));
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(pgDir, 'pg'),
    port: await freePort(),
    database: 'bench_queue',
    persistent: false,
  });
  onCleanup(() => pg.stop());
  return { databaseUrl, mariadbPid: mariadb.pid, queueUrl: pg.url };
}

export interface Service {
  baseUrl: string;
  env: NodeJS.ProcessEnv;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The service in its own process, NODE_ENV=production. `env` adds to or overrides the bench's
 * settings (a worker-only process, another SECRETS_KEY...); `profileDir` adds --cpu-prof.
 */
export async function startService(
  stores: Stores,
  opts: { env?: NodeJS.ProcessEnv; profileDir?: string | undefined; nodeFlags?: string[] } = {},
): Promise<Service> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const { BASE_URL: _unused, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    NODE_ENV: 'production',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    DATABASE_URL: stores.databaseUrl,
    QUEUE_URL: stores.queueUrl,
    // 120 a minute per client is the production default; the loads send thousands a second.
    TOKEN_RATE_LIMIT_PER_MINUTE: '1000000',
    API_RATE_LIMIT_PER_MINUTE: '100000000',
    // One bench user starts runs from 32 connections: the per-user run quotas would answer most 429.
    USER_MAX_CONCURRENT_RUNS: '1000000',
    USER_RUNS_PER_MINUTE: '1000000',
    // ...and may hold every worker slot, as before the per-user share (a fairness row sets its own).
    USER_MAX_WORKER_SLOTS: '1000',
    // ...and start steps at the engine's pace, not one user's share of it (row 11 sets the default).
    USER_STEPS_PER_SECOND: '0',
    // Row 6a creates workflows as one user for its whole duration: the storage quotas would answer 409.
    USER_MAX_WORKFLOWS: '10000000',
    USER_MAX_STORED_BYTES: '1099511627776',
    ...opts.env,
  };
  const flags = opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(opts.profileDir)] : [];
  flags.push(...(opts.nodeFlags ?? []));
  let text = '';
  const child = spawnNode([...flags, 'src/main.ts'], { env });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  await waitForReady(`${baseUrl}/readyz`, child, () => text);
  const service: Service = {
    baseUrl,
    env,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      const problems = text.split('\n').filter((l) => /"level":(50|60)/.test(l));
      if (problems.length)
        console.error(`the service logged ${problems.length} errors, e.g.:\n${problems.slice(0, 3).join('\n')}`);
    },
  };
  onCleanup(() => service.stop());
  return service;
}

/** One load from its own process (bench/load.ts), so it never shares an event loop with a server. */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'oa-bench-load-'));
  const file = path.join(dir, 'spec.json');
  await writeFile(file, JSON.stringify(spec));
  const child = spawnNode(['bench/load.ts', file]);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const [code] = (await once(child, 'exit')) as [number];
  await rm(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the load generator failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}
