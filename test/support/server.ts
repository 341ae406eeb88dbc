import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createServer } from 'node:http';
import { loadConfig } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import { createApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/http/logger.ts';
import type { Dialect } from '../../src/db/knex.ts';
import { createTestDb } from './db.ts';

export interface TestServer {
  baseUrl: string;
  ctx: AppContext;
  /** Every log line the service wrote (JSON text), to assert on redaction. */
  logs: string[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 with a fresh migrated database; BASE_URL is its own address. */
export async function startTestServer(options: { dialect?: Dialect; env?: Record<string, string> } = {}): Promise<TestServer> {
  const testDb = await createTestDb(options.dialect ?? 'pg');
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(String(chunk));
      callback();
    },
  });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({ NODE_ENV: 'test', BASE_URL: baseUrl, LOG_LEVEL: 'info', ...options.env });
  const ctx: AppContext = { config, db: testDb.db, logger: createLogger({ level: config.LOG_LEVEL, destination }) };
  server.on('request', createApp(ctx));
  return {
    baseUrl,
    ctx,
    logs,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await testDb.destroy();
    },
  };
}
