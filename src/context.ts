import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Sealer } from './shared/sealing.ts';

/**
 * What every domain needs at run time; built once in main.ts (or by a test).
 * This module imports no domain, so no domain's import chain can lead back to it in a circle: a
 * domain that adds to the context declares its field in its own module by declaration merging, as fastify
 * plugins decorate FastifyInstance (src/runs/machinery.ts adds `runs`, the run machinery).
 */
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
  /** Set once the process begins to stop (SIGTERM): /readyz answers 503 so no new work is sent here. */
  stopping?: boolean;
}

/** What a service that only reads and writes the store needs (the CLI and tests have just this). */
export type DbContext = Pick<AppContext, 'db'>;

/** A store service that also seals secrets at rest. */
export type SealerContext = Pick<AppContext, 'db' | 'sealer'>;
