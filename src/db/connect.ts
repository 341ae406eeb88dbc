import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded.ts';
import { createKnex, dialectOfUrl, type Dialect } from './knex.ts';
import { migrateLatest } from './migrate.ts';
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
      });
  const url = config.DATABASE_URL ?? embedded!.url;
  const db = createKnex(url, { poolMax: options.poolMax ?? 10, ...(options.logger ? { logger: options.logger } : {}) });
  try {
    if (options.migrate ?? true) await migrateLatest(db, { sealer });
  } catch (err) {
    await db.destroy();
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
      await db.destroy();
      await embedded?.stop();
    },
  };
}

/** pg-boss's database: QUEUE_URL, else the store when it is PostgreSQL; undefined for MySQL without QUEUE_URL. */
export function resolveQueueUrl(config: Config, database: Pick<Database, 'dialect' | 'url'>): string | undefined {
  if (config.QUEUE_URL) return config.QUEUE_URL;
  return database.dialect === 'pg' ? database.url : undefined;
}
