// `npm run worker`: a process that only executes workflow runs (pg-boss jobs), for scaling out
// beside the API processes. Same configuration as `npm start`; needs DATABASE_URL (the store) and
// a PostgreSQL queue (QUEUE_URL, or the store itself when it is PostgreSQL).
import { ConfigError, loadConfig } from './config.ts';
import { openDatabase, resolveQueueUrl } from './db/connect.ts';
import { createLogger } from './http/logger.ts';
import { startRunMachinery } from './runs/machinery.ts';

const SHUTDOWN_GRACE_MS = 20_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ level: config.LOG_LEVEL });
  if (!config.DATABASE_URL) {
    // The embedded PostgreSQL belongs to the `npm start` process; a worker must share a real store.
    console.error('DATABASE_URL must be set for a worker (the store the API uses).');
    process.exit(1);
  }
  const database = await openDatabase(config);
  const queueUrl = resolveQueueUrl(config, database);
  if (!queueUrl) {
    console.error('QUEUE_URL must be set: the store is MySQL and runs are queued on PostgreSQL.');
    await database.close();
    process.exit(1);
  }
  const runs = await startRunMachinery({ config, db: database.db, logger, queueUrl, worker: true });
  logger.info({ pid: process.pid }, 'worker started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker stopping: finishing in-flight runs');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting (unfinished runs are retried by another worker)');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    await runs.stop();
    await database.close();
    logger.info('worker stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

await main();
