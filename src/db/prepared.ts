import type { Knex } from 'knex';
import { dialectOf, type Dialect } from './knex.ts';

// The statements every authenticated request runs (bearer and API-key lookups, the proxy token's
// revocation check, the token endpoint's reads and writes) as server-side prepared statements, on a connection
// of knex's own pool: the query is written once with the knex builder, compiled to SQL once per
// dialect, and per request only its parameters travel (MySQL binary protocol, PostgreSQL named
// statements); the server parses it once per connection. Measured in docs/benchmarks-history.md.

type Params = Record<string, string | number | null>;

/** Where a parameter goes in the built query (a string: knex refuses objects as values). */
const PLACEHOLDER = '\u0000param:';
const placeholder = (name: string) => `${PLACEHOLDER}${name}`;
const paramName = (binding: unknown) =>
  typeof binding === 'string' && binding.startsWith(PLACEHOLDER) ? binding.slice(PLACEHOLDER.length) : undefined;

interface Compiled {
  sql: string;
  /** Each binding: a parameter's name, or a constant the query holds. */
  bindings: ReadonlyArray<{ param: string } | { value: unknown }>;
}

interface MysqlConnection {
  execute(sql: string, values: unknown[], callback: (err: Error | null, rows: unknown) => void): void;
}
interface PgConnection {
  query(config: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export interface PreparedQuery<P extends Params, Row> {
  /** Every row the statement returns. */
  rows(db: Knex, params: P): Promise<Row[]>;
  /** The first row, or undefined. */
  first(db: Knex, params: P): Promise<Row | undefined>;
  /** Runs an insert, update or delete: the number of rows it changed. */
  run(db: Knex, params: P): Promise<number>;
  /** The statement's SQL (as compiled for `db`'s dialect) and its values, to send within a larger one (oneRoundTrip.ts). */
  statement(db: Knex, params: P): { sql: string; values: Array<string | number | null> };
}

/**
 * A prepared query. `build` gets the knex instance and `param(name)`, which stands for a parameter;
 * the built query (a builder, or `db.raw` with `param(name)` among its bindings, for what the builder
 * cannot say) must have the same shape whatever the parameters are. Given a transaction
 * (`db.transaction(async (trx) => ...)`), it runs on the transaction's connection, as knex's own
 * queries do (the transaction's client hands out that one connection); otherwise on one of the pool.
 */
export function prepared<P extends Params, Row = Record<string, unknown>>(
  name: string,
  build: (db: Knex, param: (name: keyof P & string) => string) => Knex.QueryBuilder | Knex.Raw,
): PreparedQuery<P, Row> {
  const compiled = new Map<Dialect, Compiled>();
  const compile = (db: Knex, dialect: Dialect): Compiled => {
    let found = compiled.get(dialect);
    if (!found) {
      const native = build(db, placeholder).toSQL().toNative();
      const bindings = native.bindings.map((b) => {
        const param = paramName(b);
        return param === undefined ? { value: b } : { param };
      });
      found = { sql: native.sql, bindings };
      compiled.set(dialect, found);
    }
    return found;
  };

  function statement(db: Knex, params: P): { sql: string; values: Array<string | number | null> } {
    const { sql, bindings } = compile(db, dialectOf(db));
    return { sql, values: bindings.map((b) => ('param' in b ? params[b.param] : b.value) as string | number | null) };
  }

  /** The driver's answer: rows for a select; for a write, MySQL's result header or PostgreSQL's result. */
  async function execute(db: Knex, params: P): Promise<unknown> {
    const dialect = dialectOf(db);
    const { sql, values } = statement(db, params);
    // knex's Client#acquireConnection/releaseConnection: declared in knex's types, not yet in its
    // documentation (docs/upstream/knex-client-connections.md; knex is pinned to the version tested).
    // A connection knex marked unusable is never handed out: its pool validates on acquire.
    const connection: unknown = await db.client.acquireConnection();
    try {
      if (dialect === 'mysql') {
        return await new Promise<unknown>((resolve, reject) => {
          (connection as MysqlConnection).execute(sql, values, (err, result) => (err ? reject(err) : resolve(result)));
        });
      }
      return await (connection as PgConnection).query({ name, text: sql, values });
    } finally {
      await db.client.releaseConnection(connection);
    }
  }

  async function rows(db: Knex, params: P): Promise<Row[]> {
    const result = await execute(db, params);
    return (dialectOf(db) === 'mysql' ? result : (result as { rows: unknown[] }).rows) as Row[];
  }

  return {
    rows,
    statement,
    async first(db, params) {
      return (await rows(db, params))[0];
    },
    async run(db, params) {
      const result = await execute(db, params);
      return Number(
        dialectOf(db) === 'mysql'
          ? (result as { affectedRows: number }).affectedRows
          : ((result as { rowCount: number | null }).rowCount ?? 0),
      );
    },
  };
}
