import type { Knex } from 'knex';
import * as initial from './migrations/0001_initial.ts';
import * as runLogsWhole from './migrations/0002_run_logs_whole.ts';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Add new ones here; knex's file loader is not used (it cannot load .ts). */
const migrations: ReadonlyArray<readonly [name: string, migration: Migration]> = [
  ['0001_initial', initial],
  ['0002_run_logs_whole', runLogsWhole],
];

const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => migrations.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const found = migrations.find(([n]) => n === name);
    if (!found) throw new Error(`Unknown migration ${name}`);
    return found[1];
  },
};

const config: Knex.MigratorConfig = { migrationSource, tableName: 'knex_migrations' };

/** Applies pending migrations; returns the names applied. Concurrent starters are serialised by knex's lock table. */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(config)) as [number, string[]];
  return applied;
}

/** Rolls back the last batch, or every migration with `all`; returns the names rolled back. */
export async function migrateRollback(db: Knex, options: { all?: boolean } = {}): Promise<string[]> {
  const [, rolledBack] = (await db.migrate.rollback(config, options.all ?? false)) as [number, string[]];
  return rolledBack;
}

export async function migrationStatus(db: Knex): Promise<{ applied: string[]; pending: string[] }> {
  const [applied, pending] = (await db.migrate.list(config)) as [Array<{ name: string }>, string[]];
  return { applied: applied.map((m) => m.name), pending: pending.map((m) => migrationSource.getMigrationName(m)) };
}
