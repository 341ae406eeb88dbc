import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import { createApp, rateLimitersOf, type RateLimiters } from '../../src/app.ts';
import { createLogger } from '../../src/http/logger.ts';
import { createHttpServer } from '../../src/http/server.ts';
import { createKnex, destroyKnex, dialectOfUrl, type Dialect } from '../../src/db/knex.ts';
import { migrateLatest } from '../../src/db/migrate.ts';
import { startRunMachinery } from '../../src/machinery.ts';
import type { CallbackRetry } from '../../src/hooks/deliveries.ts';
import { createTestDb, testKnexLogger, type TestDb } from './db.ts';
import { TEST_SECRETS_KEY, testSealer } from './secrets.ts';

export interface TestServer {
  baseUrl: string;
  ctx: AppContext;
  /** Every log line the service wrote (JSON text), to assert on redaction. */
  logs: string[];
  /** The store's URL (for child processes such as a worker). */
  databaseUrl: string;
  /** The pg-boss database's URL, when started with `runs`. */
  queueUrl: string | undefined;
  /** The app's shared rate limiters (flush them to share counts with other instances now). */
  rateLimiters: RateLimiters;
  close(): Promise<void>;
}

export interface TestServerOptions {
  dialect?: Dialect;
  env?: Record<string, string>;
  /**
   * Start the run queue (pg-boss on the test PostgreSQL: the store itself when it is PostgreSQL,
   * else a fresh database, as QUEUE_URL would be) and, unless `worker: false`, an in-process worker.
   */
  runs?: boolean | { worker?: boolean };
  /** Use (and migrate) this database as the store instead of a fresh one on the shared test server. */
  databaseUrl?: string;
  /** With `runs`: put the queue in this PostgreSQL database instead. */
  queueUrl?: string;
  /** With `runs`: the run-ended callbacks' retry policy instead of the production one (hours long). */
  callbackRetry?: CallbackRetry;
  /** With `databaseUrl`: the store's bound on a statement's answer (DATABASE_STATEMENT_TIMEOUT_SECONDS). */
  statementTimeoutMs?: number;
}

/** A store at a given URL, migrated; closing it only closes the pool (the database is the caller's). */
async function existingDb(url: string, statementTimeoutMs?: number): Promise<TestDb> {
  const db = createKnex(url, {
    poolMax: 5,
    logger: testKnexLogger,
    ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
  });
  await migrateLatest(db);
  return { db, dialect: dialectOfUrl(url), url, destroy: () => destroyKnex(db) };
}

/** A real HTTP server on 127.0.0.1 with a fresh migrated database; BASE_URL is its own address. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const testDb = options.databaseUrl
    ? await existingDb(options.databaseUrl, options.statementTimeoutMs)
    : await createTestDb(options.dialect ?? 'pg');
  let queueDb: TestDb | undefined;
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(String(chunk));
      callback();
    },
  });
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    BASE_URL: baseUrl,
    LOG_LEVEL: 'info',
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...options.env,
  });
  const ctx: AppContext = {
    config,
    db: testDb.db,
    logger: createLogger({ level: config.LOG_LEVEL, destination }),
    sealer: await testSealer(config),
    now: Date.now,
  };
  if (options.runs) {
    const queueUrl =
      options.queueUrl ??
      (testDb.dialect === 'pg' ? testDb.url : (queueDb = await createTestDb('pg', { migrate: false })).url);
    const worker = options.runs === true || options.runs.worker !== false;
    ctx.runs = await startRunMachinery(ctx, {
      queueUrl,
      worker,
      ...(options.callbackRetry ? { callbackRetry: options.callbackRetry } : {}),
    });
    ctx.queueHealth = ctx.runs.queue.health;
  }
  const app = createApp(ctx);
  const rateLimiters = rateLimitersOf(app);
  server.on('request', app);
  return {
    rateLimiters,
    baseUrl,
    ctx,
    logs,
    databaseUrl: testDb.url,
    queueUrl: options.runs ? (options.queueUrl ?? queueDb?.url ?? testDb.url) : undefined,
    async close() {
      rateLimiters.api.stop();
      rateLimiters.token.stop();
      rateLimiters.tokenFailures.stop();
      rateLimiters.runStarts.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ctx.runs?.stop();
      await testDb.destroy();
      await queueDb?.destroy();
    },
  };
}
