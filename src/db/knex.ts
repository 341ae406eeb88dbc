import knex, { type Knex } from 'knex';
import pg from 'pg';

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
}

/** A Knex instance for a mysql:// or postgres:// URL. */
export function createKnex(url: string, options: KnexOptions = {}): Knex {
  const pool = { min: options.poolMin ?? 0, max: options.poolMax ?? 10 };
  if (dialectOfUrl(url) === 'mysql') {
    return knex({
      client: 'mysql2',
      // utf8mb4 for full Unicode names; UTC so any DATETIME the server computes is unambiguous
      // (we store epoch milliseconds, but NOW() may appear in ad-hoc queries).
      connection: { uri: url, charset: 'utf8mb4', timezone: 'Z', supportBigNumbers: true, bigNumberStrings: false } as Knex.MySql2ConnectionConfig,
      pool,
    });
  }
  return knex({ client: 'pg', connection: { connectionString: url }, pool });
}
