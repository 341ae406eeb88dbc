import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded.ts';
import { createKnex, destroyKnex, dialectOfUrl, probeDatabase, type Dialect } from './knex.ts';
import { migrateLatest } from './migrate.ts';
import { assertSecretsOpen } from './sealedSecrets.ts';
import { loadSealer } from '../shared/keyEncryptionKey.ts';
import type { Sealer } from '../shared/sealing.ts';

export interface Database {
  db: Knex;
  dialect: Dialect;
  /** The store's URL (contains credentials: never log it). */
  url: string;
  /** Set when the store is the embedded PostgreSQL under DATA_DIR/pg. */
  embedded: EmbeddedPostgresHandle | undefined;
  /** Seals and opens the secrets kept in this store, with the key-encryption key. */
  sealer: Sealer;
  /** Destroys the pool, then stops the embedded cluster if this process started it. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  poolMax?: number;
  /** Where knex's own messages go (see createKnex). */
  logger?: Logger;
  onEmbeddedLog?: (line: string) => void;
  /** What is happening, for a person waiting on a first start (one short sentence each). */
  onProgress?: (message: string) => void;
}

/** Connects to DATABASE_URL, or starts the embedded PostgreSQL when it is unset; migrates by default. */
export async function openDatabase(config: Config, options: OpenDatabaseOptions = {}): Promise<Database> {
  const sealer = await loadSealer(config);
  const embedded = config.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: path.join(config.DATA_DIR, 'pg'),
        port: config.EMBEDDED_PG_PORT,
        ...(options.onEmbeddedLog ? { onLog: options.onEmbeddedLog } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });
  const url = config.DATABASE_URL ?? embedded!.url;
  if (config.DATABASE_URL) await probeDatabase(url);
  const logger = options.logger ? { logger: options.logger } : {};
  // Requests' statements are bounded (DATABASE_STATEMENT_TIMEOUT_SECONDS); a migration's DDL may
  // take minutes on a large table, so migrations run on a pool of their own without that bound.
  const db = createKnex(url, {
    poolMax: options.poolMax ?? 10,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_SECONDS * 1000,
    ...logger,
  });
  try {
    if (options.migrate ?? true) {
      const migrator = createKnex(url, { poolMax: 2, statementTimeoutMs: 0, ...logger });
      try {
        const applied = await migrateLatest(migrator, { sealer });
        if (applied.length)
          options.onProgress?.(`applied ${applied.length} database migration${applied.length === 1 ? '' : 's'}`);
      } finally {
        await destroyKnex(migrator);
      }
      // A wrong SECRETS_KEY stops the process here, not at its first login (docs/operating.md "Key-encryption key").
      await assertSecretsOpen(db, sealer);
    }
  } catch (err) {
    await destroyKnex(db);
    await embedded?.stop();
    throw err;
  }
  return {
    db,
    dialect: dialectOfUrl(url),
    url,
    embedded,
    sealer,
    close: async () => {
      await destroyKnex(db);
      await embedded?.stop();
    },
  };
}

/** pg-boss's database: QUEUE_URL, else the store when it is PostgreSQL; undefined for MySQL without QUEUE_URL. */
export function resolveQueueUrl(config: Config, database: Pick<Database, 'dialect' | 'url'>): string | undefined {
  if (config.QUEUE_URL) return config.QUEUE_URL;
  return database.dialect === 'pg' ? database.url : undefined;
}

const DEFAULT_PORTS: Record<string, string> = { 'mysql:': '3306', 'postgres:': '5432', 'postgresql:': '5432' };

/**
 * One line for the operator when a database named by `variable` cannot be used at start-up
 * (refused, unknown host, no answer, wrong credentials or database), naming the host and what to
 * check; undefined for any other error (a bug: let its stack show).
 */
export function databaseProblem(err: unknown, url: string, variable: 'DATABASE_URL' | 'QUEUE_URL'): string | undefined {
  let host = '?';
  let port = '';
  let database = '';
  try {
    const parsed = new URL(url);
    host = parsed.hostname;
    port = parsed.port || (DEFAULT_PORTS[parsed.protocol] ?? '');
    database = decodeURIComponent(parsed.pathname.slice(1));
  } catch {
    // config validation already refused a malformed URL
  }
  const e = err as { code?: string; name?: string; message?: string };
  const code = e.code ?? '';
  const message = e.message ?? '';
  const where = `${host}${port ? `:${port}` : ''}`;
  const hostAndPort = `check that ${variable} names the right host and port`;
  let problem: [string, string] | undefined;
  if (code === 'ECONNREFUSED')
    problem = [
      'connection refused',
      `Check that the database server is running and listening there, and ${hostAndPort}.`,
    ];
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    problem = [`host "${host}" not found`, `Check the host name in ${variable} and DNS.`];
  else if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    problem = ['host unreachable', `Check the network route and firewall, and ${hostAndPort}.`];
  else if (code === 'ETIMEDOUT' || e.name === 'KnexTimeoutError' || /timeout|timed out/i.test(message))
    problem = ['no answer in time', `Check for a firewall in between, and ${hostAndPort}.`];
  else if (code === '28P01' || code === '28000' || code === 'ER_ACCESS_DENIED_ERROR')
    problem = ['the server refused the user name or password', `Check the credentials in ${variable}.`];
  else if (code === '3D000' || code === 'ER_BAD_DB_ERROR')
    problem = [`database "${database}" does not exist`, `Create it, or fix the database name in ${variable}.`];
  else if (code === 'ECONNRESET' || /self.signed|certificate|SSL|TLS/i.test(message))
    problem = [`the connection failed (${message})`, `Check the port and the TLS settings in ${variable}.`];
  else if (/Connection terminated|from backend|PROTOCOL|handshake|Malformed/i.test(`${code} ${message}`)) {
    problem = [
      `the connection failed (${message})`,
      `Check that the server at that port speaks the protocol of ${variable}'s scheme (postgres:// or mysql://), and ${hostAndPort}.`,
    ];
  }
  if (!problem) return undefined;
  return `Cannot use the database at ${where} (${variable}): ${problem[0]}. ${problem[1]}`;
}
