import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { RunMachinery } from './runs/machinery.ts';
import type { Sealer } from './shared/sealing.ts';

/** What every domain needs at run time; built once in main.ts (or by a test). */
export interface AppContext {
  config: Config;
  db: Knex;
  logger: Logger;
  /** Seals the service's own secrets at rest (signing keys, session key) with the key-encryption key. */
  sealer: Sealer;
  /** The clock (ms since the epoch): Date.now, or a test's own to move time. */
  now: () => number;
  /** Checks that the run queue's database answers; absent when no queue is wired in. */
  queueHealth?: () => Promise<void>;
  /** The run queue, model router and (when this process executes runs) worker; absent without a queue database. */
  runs?: RunMachinery;
}

/** What a service that only reads and writes the store needs (the CLI and tests have just this). */
export type DbContext = Pick<AppContext, 'db'>;

/** A store service that also seals secrets at rest. */
export type SealerContext = Pick<AppContext, 'db' | 'sealer'>;
