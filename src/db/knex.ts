import knex, { type Knex } from 'knex';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { endOneRoundTrips } from './oneRoundTrip.ts';
import { boundMysqlQueries, boundMysqlServer, setStatementTimeout } from './statementTimeout.ts';

export type Dialect = 'pg' | 'mysql';

// BIGINT (oid 20) columns hold epoch milliseconds and counts: far below 2^53, so a JS number is
// exact. Without this, pg returns them as strings.
pg.types.setTypeParser(20, (value) => Number(value));

export function dialectOfUrl(url: string): Dialect {
  const protocol = new URL(url).protocol;
  if (protocol === 'mysql:') return 'mysql';
  if (protocol === 'postgres:' || protocol === 'postgresql:') return 'pg';
  throw new Error(`Unsupported database URL scheme ${protocol} (use mysql:// or postgres://).`);
}

export function dialectOf(db: Knex): Dialect {
  const client = String(db.client.config.client);
  return client === 'mysql2' || client === 'mysql' ? 'mysql' : 'pg';
}

export interface KnexOptions {
  poolMin?: number;
  poolMax?: number;
  /** Where knex's own messages go; by default a pino logger at `warn` on stderr. */
  logger?: Logger;
  /**
   * How long a query may wait for the store's answer, and a request for a pooled connection
   * (DATABASE_STATEMENT_TIMEOUT_SECONDS); 0: no bound on answers (migrations, whose DDL may take
   * minutes). Default DEFAULT_STATEMENT_TIMEOUT_MS.
   */
  statementTimeoutMs?: number;
}

let stderrLogger: Logger | undefined;

/**
 * knex writes its own messages (`Connection Error: ...`, `Acquire connection error: <stack>`,
 * deprecations) with console.log unless given a `log` option: they go through pino instead, so a
 * production log stays one JSON object per line (and stdout stays clean for the admin CLI's --json).
 */
export function knexLog(logger: Logger | undefined): Knex.Config['log'] {
  const target = (logger ?? (stderrLogger ??= pino({ level: 'warn' }, process.stderr))).child({ component: 'knex' });
  const to = (level: 'warn' | 'error' | 'debug') => (message: unknown) => {
    if (typeof message === 'string') target[level](message);
    else target[level]({ detail: message }, 'knex');
  };
  // knex's Logger calls deprecate with the message it formatted, not (method, alternative) as typed.
  const deprecate = to('warn') as unknown as (method: string, alternative: string) => void;
  return { warn: to('warn'), error: to('error'), debug: to('debug'), deprecate };
}

// While a database is down or stalled (a paused server answers nothing, though its port accepts
// connections), a request must fail within seconds (and answer 503), not hang: bound the wait for
// a pooled connection, for a new connection, and for a query's answer, on both dialects.
const CONNECT_TIMEOUT_MS = 3_000;
/** The bound on a query's answer and a pooled connection's wait when none is given. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
/** A pooled connection's wait when no bound is given (or answers are not bounded). */
const DEFAULT_ACQUIRE_TIMEOUT_MS = 5_000;

/**
 * Opens and closes one connection to `url`, outside any pool: at start-up, a database that cannot
 * be reached fails here with the driver's own error (code ECONNREFUSED, 28P01 ...), for a one-line
 * hint, before a pool would log each failed attempt with its stack.
 */
export async function probeDatabase(url: string): Promise<void> {
  if (dialectOfUrl(url) === 'mysql') {
    const mysql = await import('mysql2/promise');
    const connection = await mysql.createConnection({ uri: url, connectTimeout: CONNECT_TIMEOUT_MS });
    await connection.end();
    return;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => {}); // a failure is the rejection of connect()
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Closes a store's Knex instance: its pool, and the MySQL one-round-trip connections kept beside it
 * (oneRoundTrip.ts). Call it instead of `db.destroy()` so a process that closes its store exits.
 */
export async function destroyKnex(db: Knex): Promise<void> {
  try {
    await db.destroy();
  } finally {
    await endOneRoundTrips(db);
  }
}

/** A Knex instance for a mysql:// or postgres:// URL (close it with destroyKnex). */
export function createKnex(url: string, options: KnexOptions = {}): Knex {
  const statementMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = { min: options.poolMin ?? 0, max: options.poolMax ?? 10 };
  const acquireConnectionTimeout = options.statementTimeoutMs ? options.statementTimeoutMs : DEFAULT_ACQUIRE_TIMEOUT_MS;
  const log = knexLog(options.logger);
  let db: Knex;
  if (dialectOfUrl(url) === 'mysql') {
    db = knex({
      client: 'mysql2',
      // utf8mb4 for full Unicode names; UTC so any DATETIME the server computes is unambiguous
      // (we store epoch milliseconds, but NOW() may appear in ad-hoc queries).
      connection: {
        uri: url,
        charset: 'utf8mb4',
        timezone: 'Z',
        supportBigNumbers: true,
        bigNumberStrings: false,
        connectTimeout: CONNECT_TIMEOUT_MS,
      } as Knex.MySql2ConnectionConfig,
      pool: {
        ...pool,
        afterCreate(
          connection: Parameters<typeof boundMysqlQueries>[0],
          done: (err: Error | null, connection: unknown) => void,
        ) {
          boundMysqlQueries(connection, statementMs);
          boundMysqlServer(connection, statementMs, () => done(null, connection));
        },
      },
      acquireConnectionTimeout,
      log,
    });
  } else {
    // query_timeout (the driver's) ends the wait for a stalled server; statement_timeout (the
    // server's, a little sooner) cancels a slow statement there, leaving the connection usable.
    const bounds =
      statementMs > 0 ? { query_timeout: statementMs, statement_timeout: Math.max(1, statementMs - 500) } : {};
    db = knex({
      client: 'pg',
      connection: { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...bounds },
      pool,
      acquireConnectionTimeout,
      log,
    });
  }
  setStatementTimeout(db, statementMs, acquireConnectionTimeout);
  return db;
}
