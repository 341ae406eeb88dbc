// The bound on how long a query waits for the store's answer (DATABASE_STATEMENT_TIMEOUT_SECONDS),
// kept per Knex instance so the connections opened beside knex's pool (oneRoundTrip.ts) use the
// same one. On MySQL the bound is the driver's (mysql2's per-query `timeout`): a stalled server
// (paused, or a network that drops packets) answers nothing, so no server-side limit could end the
// wait; on PostgreSQL it is pg's `query_timeout`, with `statement_timeout` on the server besides.
import type { Knex } from 'knex';

const bounds = new WeakMap<Knex, { statementMs: number; acquireMs: number }>();

export function setStatementTimeout(db: Knex, statementMs: number, acquireMs: number): void {
  bounds.set(db, { statementMs, acquireMs });
}

/** The store's statement bound in ms (0: none). */
export function statementTimeoutOf(db: Knex): number {
  return bounds.get(db)?.statementMs ?? 0;
}

/** How long a query of the store waits for a pooled connection (ms), as knex's pool does. */
export function acquireTimeoutOf(db: Knex, fallback: number): number {
  return bounds.get(db)?.acquireMs ?? fallback;
}

/** The code of a query's error when the store gave no answer within the bound. */
export const STATEMENT_TIMEOUT_CODE = 'STORE_STATEMENT_TIMEOUT';

export class StatementTimeout extends Error {
  readonly code = STATEMENT_TIMEOUT_CODE;
  constructor(ms: number) {
    super(`The database gave no answer within ${ms} ms (DATABASE_STATEMENT_TIMEOUT_SECONDS).`);
    this.name = 'StatementTimeout';
  }
}

interface MysqlConnection {
  query: (...args: unknown[]) => unknown;
  execute: (...args: unknown[]) => unknown;
  destroy(): void;
}

/**
 * The server's own bound, a little shorter than the driver's: a statement the server is slow with
 * (a lock wait, a large scan) is ended there, and the connection stays usable (MariaDB:
 * `max_statement_time`, error 1969; MySQL, which has no such variable: `max_execution_time`,
 * SELECTs only, error 3024). The driver's bound (boundMysqlQueries) remains for a stalled server.
 * Queued on the connection before any other statement; `done` is called once it is set (or refused).
 */
export function boundMysqlServer(connection: MysqlConnection, ms: number, done: () => void): void {
  if (ms <= 0) return done();
  const serverMs = Math.max(100, ms - 500);
  const query = connection.query as (sql: string, values: unknown[], cb: (err: unknown) => void) => void;
  query.call(connection, 'SET SESSION max_statement_time = ?', [serverMs / 1000], (err) => {
    if (!err) return done();
    query.call(connection, 'SET SESSION max_execution_time = ?', [serverMs], () => done());
  });
}

/**
 * Gives every query and prepared statement of a mysql2 connection (callback API: knex's, and
 * prepared.ts's `execute`) `ms` to be answered, counted from the call (a statement's preparation
 * included). Past it the callback gets a StatementTimeout and the connection is destroyed: the
 * answer may still come, and must not be read as the next statement's, so the pool drops the
 * connection (knex's mysql2 validation refuses a destroyed stream) and opens another.
 */
export function boundMysqlQueries(connection: MysqlConnection, ms: number): void {
  if (ms <= 0) return;
  for (const method of ['query', 'execute'] as const) {
    const original = connection[method].bind(connection);
    connection[method] = (...args: unknown[]) => {
      const last = args.length - 1;
      if (typeof args[last] !== 'function') return original(...args);
      const callback = args[last] as (err: unknown, ...results: unknown[]) => void;
      let done = false;
      const timer = setTimeout(() => {
        done = true;
        connection.destroy();
        callback(new StatementTimeout(ms));
      }, ms);
      args[last] = (err: unknown, ...results: unknown[]) => {
        clearTimeout(timer);
        if (done) return;
        done = true;
        // mysql2 names no code for MariaDB's own errors: 1969 is max_statement_time's.
        const e = err as { errno?: unknown; code?: unknown } | null;
        if (e && e.errno === 1969 && !e.code) e.code = 'ER_STATEMENT_TIMEOUT';
        callback(err, ...results);
      };
      return original(...args);
    };
  }
}
