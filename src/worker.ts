// `npm run worker`: a process that only executes workflow runs (pg-boss jobs), for scaling out
// beside the API processes. Same configuration as `npm start`; needs DATABASE_URL (the store) and
// a PostgreSQL queue (QUEUE_URL, or the store itself when it is PostgreSQL).
import { loadConfigOrExit, orExit, stopGracefully } from './lifecycle.ts';
import { loadWorkerConfig } from './config.ts';
import { openDatabase, resolveQueueUrl } from './db/connect.ts';
import { createLogger } from './http/logger.ts';
import { startRunMachinery } from './machinery.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit(loadWorkerConfig);
  const logger = createLogger({ level: config.LOG_LEVEL });
  if (!config.DATABASE_URL) {
    // The embedded PostgreSQL belongs to the `npm start` process; a worker must share a real store.
    console.error('DATABASE_URL must be set for a worker (the store the API uses).');
    process.exit(1);
  }
  const database = await orExit(openDatabase(config, { logger }), {
    url: config.DATABASE_URL,
    variable: 'DATABASE_URL',
  });
  const queueUrl = resolveQueueUrl(config, database);
  if (!queueUrl) {
    console.error('QUEUE_URL must be set: the store is MySQL and runs are queued on PostgreSQL.');
    await database.close();
    process.exit(1);
  }
  const runs = await orExit(
    startRunMachinery(
      { config, db: database.db, logger, sealer: database.sealer, now: Date.now },
      { queueUrl, worker: true },
    ),
    {
      url: queueUrl,
      variable: config.QUEUE_URL ? 'QUEUE_URL' : 'DATABASE_URL',
    },
  );
  // pino's base fields already carry `pid` (a second one made the line invalid for Elasticsearch).
  logger.info('worker started');

  // Unfinished runs of a worker that cannot stop in time are retried by another worker.
  stopGracefully(
    logger,
    'worker',
    async () => {
      await runs.stop();
      await database.close();
    },
    config.SHUTDOWN_GRACE_SECONDS,
  );
}

await main();
