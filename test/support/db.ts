import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { pino } from 'pino';
import { inject } from 'vitest';
import { createKnex, destroyKnex, type Dialect } from '../../src/db/knex.ts';
import { migrateLatest } from '../../src/db/migrate.ts';

export interface TestDb {
  db: Knex;
  dialect: Dialect;
  /** URL of this test database (for child processes such as the admin CLI). */
  url: string;
  /** Closes the pool and drops the database. */
  destroy(): Promise<void>;
}

/** 'pg' always (the run's embedded PostgreSQL); 'mysql' too when TEST_MYSQL_URL is set. */
export function testDialects(): Dialect[] {
  return process.env.TEST_MYSQL_URL ? ['pg', 'mysql'] : ['pg'];
}

function serverUrl(dialect: Dialect): string {
  if (dialect === 'pg') return process.env.TEST_PG_URL ?? inject('pgAdminUrl');
  const url = process.env.TEST_MYSQL_URL;
  if (!url) throw new Error('TEST_MYSQL_URL is not set');
  return url;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * knex's own messages about the test databases (a pool reconnecting while a fault test holds the
 * database down, a migration a test makes fail): kept here (the last 500), not printed, so that a
 * passing `npm test` prints no stack traces. Each message is one pino JSON line.
 */
export const knexMessages: string[] = [];
export const testKnexLogger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _encoding, callback) {
      knexMessages.push(String(chunk));
      if (knexMessages.length > 500) knexMessages.shift();
      callback();
    },
  }),
);

/** A fresh, uniquely named database on the shared test server; migrated unless `migrate: false`. */
export async function createTestDb(dialect: Dialect, options: { migrate?: boolean } = {}): Promise<TestDb> {
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = createKnex(serverUrl(dialect), { poolMax: 1, logger: testKnexLogger });
  try {
    if (dialect === 'pg') await admin.raw(`CREATE DATABASE ??`, [name]);
    // MariaDB's and Debian's default for utf8mb4 (case- and accent-insensitive), named explicitly so
    // the tests see what a production server with default settings gives, whatever this server's flags.
    else await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci', [name]);
  } finally {
    await admin.destroy();
  }

  const url = withDatabase(serverUrl(dialect), name);
  const db = createKnex(url, { poolMax: 5, logger: testKnexLogger });
  if (options.migrate ?? true) await migrateLatest(db);

  return {
    db,
    dialect,
    url,
    async destroy() {
      await destroyKnex(db);
      const dropper = createKnex(serverUrl(dialect), { poolMax: 1, logger: testKnexLogger });
      try {
        if (dialect === 'pg') await dropper.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
        else await dropper.raw('DROP DATABASE IF EXISTS ??', [name]);
      } finally {
        await dropper.destroy();
      }
    },
  };
}
