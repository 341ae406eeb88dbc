import type { Knex } from 'knex';
import mysql from 'mysql2';
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2';
import { acquireTimeoutOf, boundMysqlQueries, boundMysqlServer, statementTimeoutOf } from './statementTimeout.ts';

// A transaction of several statements sent to MySQL as one multi-statement query: one round trip
// instead of one per statement and two more for BEGIN and COMMIT. Each statement costs the service
// a socket write and a wake-up, and under the runs load those, not the SQL, were most of its CPU
// (docs/benchmarks-history.md). Multi-statement queries need the connection's
// `multipleStatements` flag, which widens what an injected string could do, so it is never set on
// knex's pool: these transactions get connections of their own, from a small pool opened on first
// use with the same settings as knex's, and closed with knex's pool by whoever closes the store
// (`destroyKnex` in knex.ts: knex tells no one when it is destroyed). Values still travel as
// parameters (escaped by mysql2), never spliced in by hand.

/** A value a statement takes (mysql2 escapes it into the query). */
export type Value = string | number | boolean | null;

/** One statement: SQL with `?` placeholders, and its values. */
export interface Statement {
  sql: string;
  values: readonly Value[];
}

/**
 * `INSERT INTO table (columns) SELECT ?, ... FROM DUAL WHERE condition UNION ALL ...`: each row is
 * inserted only if its condition holds, with the row's own `conditionValues` for the condition's
 * `?` (the condition may read what an earlier statement of the transaction set: a user variable).
 */
export function insertEachWhere(
  table: string,
  columns: readonly string[],
  rows: ReadonlyArray<{ values: readonly Value[]; conditionValues?: readonly Value[] }>,
  condition: string,
): Statement {
  const row = `SELECT ${columns.map(() => '?').join(', ')} FROM DUAL WHERE ${condition}`;
  return {
    sql: `INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) ${rows.map(() => row).join(' UNION ALL ')}`,
    values: rows.flatMap((r) => [...r.values, ...(r.conditionValues ?? [])]),
  };
}

/** Connections for these transactions (a run's start and its end): each holds one a moment, so a few suffice. */
const POOL_SIZE = 4;
/** As long as a query waits for a pooled connection of knex's (src/db/knex.ts), when answers are not bounded. */
const ACQUIRE_TIMEOUT_MS = 5_000;

const pools = new WeakMap<Knex, Pool>();

function poolOf(db: Knex): Pool {
  let pool = pools.get(db);
  if (!pool) {
    const settings = db.client.config.connection as mysql.PoolOptions;
    pool = mysql.createPool({ ...settings, multipleStatements: true, connectionLimit: POOL_SIZE, maxIdle: POOL_SIZE });
    // The same bound on answers as knex's connections (statementTimeout.ts).
    const statementMs = statementTimeoutOf(db);
    pool.on('connection', (connection) => {
      const raw = connection as unknown as Parameters<typeof boundMysqlQueries>[0];
      boundMysqlQueries(raw, statementMs);
      boundMysqlServer(raw, statementMs, () => {}); // queued before the connection's first transaction
    });
    pools.set(db, pool);
  }
  return pool;
}

/**
 * Closes `db`'s one-round-trip connections, if any were opened (a later use opens others). Its
 * open sockets would otherwise keep the process alive after the store is closed.
 */
export async function endOneRoundTrips(db: Knex): Promise<void> {
  const pool = pools.get(db);
  if (!pool) return;
  pools.delete(db);
  await new Promise<void>((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())));
}

/**
 * A connection of the pool, waited for at most ACQUIRE_TIMEOUT_MS, as knex's are (mysql2's pool
 * would wait for ever): the error then reads as the database being unavailable (a 503, or a retry).
 */
function connectionOf(pool: Pool, acquireMs: number): Promise<PoolConnection> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(`Timeout acquiring a connection for a one-round-trip transaction (${acquireMs} ms).`));
    }, acquireMs);
    pool.getConnection((err, connection) => {
      clearTimeout(timer);
      if (late)
        connection?.release(); // its caller has gone
      else if (err) reject(err);
      else resolve(connection);
    });
  });
}

/** A statement's result: the rows of a SELECT, the header (affected rows) of anything else. */
export type StatementResult = RowDataPacket[] | ResultSetHeader;

/**
 * Runs the statements in order, in one transaction, in one round trip to a MySQL store, and
 * returns each one's result. When one fails, the server runs none after it: the transaction is
 * rolled back (or the connection closed) before the error is thrown.
 */
export async function inOneRoundTrip(db: Knex, statements: readonly Statement[]): Promise<StatementResult[]> {
  const connection = await connectionOf(poolOf(db), acquireTimeoutOf(db, ACQUIRE_TIMEOUT_MS));
  const sql = ['START TRANSACTION', ...statements.map((s) => s.sql), 'COMMIT'].join(';\n');
  const values = statements.flatMap((s) => s.values);
  try {
    const results = await new Promise<StatementResult[]>((resolve, reject) =>
      connection.query<RowDataPacket[][]>({ sql, values }, (err, results) =>
        err ? reject(err) : resolve(results as StatementResult[]),
      ),
    );
    connection.release();
    return results.slice(1, -1);
  } catch (err) {
    connection.query('ROLLBACK', (rollbackErr) => (rollbackErr ? connection.destroy() : connection.release()));
    throw err;
  }
}
