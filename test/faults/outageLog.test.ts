// 503s during an outage are the service shedding load as designed: they are logged once per window
// at warn (with a count of those left out), never once per request at error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/http/logger.ts';
import { OutageGate, OutageLog } from '../../src/http/outageLog.ts';
import { createKnex, destroyKnex } from '../../src/db/knex.ts';
import { freePort } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startOwnPostgres, type OwnDatabase } from './support/databases.ts';
import { apiKeyFor, bearer } from './support/fixtures.ts';

const lines = (logs: string[]) =>
  logs.map((l) => JSON.parse(l) as { level: number; msg: string; suppressed?: number; res?: { statusCode: number } });

// LOG_LEVEL=info logs through pino-http; warn (production) through the failures-only logger.
describe.each(['info', 'warn'])('503s during a real database outage (LOG_LEVEL=%s)', (level) => {
  let database: OwnDatabase;
  let server: TestServer;
  let apiKey: string;

  beforeAll(async () => {
    database = await startOwnPostgres();
    server = await startTestServer({ databaseUrl: database.url, env: { LOG_LEVEL: level } });
    apiKey = (await apiKeyFor(server.ctx.db)).token;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await database?.destroy();
  });

  it('logs one warn line for N requests answered 503, none at error level', async () => {
    await database.stop();
    const before = server.logs.length;
    const n = 12;
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${server.baseUrl}/api/workflows`, { headers: bearer(apiKey) });
      expect(res.status).toBe(503);
      await res.text();
    }
    const written = lines(server.logs.slice(before)).filter((l) => l.res?.statusCode === 503 || l.level >= 40);
    expect(written.filter((l) => l.level >= 50)).toEqual([]);
    const warns = written.filter((l) => l.level === 40 && l.res?.statusCode === 503);
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ suppressed: 0 });
    await database.start();
  }, 60_000);
});

describe('OutageLog window', () => {
  it('writes the first 503 of each window with the count left out since the last line', () => {
    const logs: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }),
    });
    let now = 0;
    const outage = new OutageLog(logger, 10_000, () => now);
    for (let i = 0; i < 5; i++) outage.record({ res: { statusCode: 503 } });
    now = 9_999;
    outage.record({ res: { statusCode: 503 } });
    expect(lines(logs).map((l) => [l.level, l.suppressed])).toEqual([[40, 0]]);
    now = 10_000;
    outage.record({ res: { statusCode: 503 } });
    expect(lines(logs).map((l) => [l.level, l.suppressed])).toEqual([
      [40, 0],
      [40, 5],
    ]);
  });
});

describe('store-outage lines of knex and of every caller (one a window, no stack)', () => {
  it('writes the first line of a window without its stack and counts the rest, for knex messages and errors that say the store is down', async () => {
    const logs: string[] = [];
    let now = 0;
    const logger = createLogger({
      level: 'info',
      destination: new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }),
      outageGate: new OutageGate(10_000, () => now),
    });
    // A store nobody listens on: every query fails to connect, and knex writes its messages with stacks.
    const db = createKnex(`postgres://app:app@127.0.0.1:${await freePort()}/none`, {
      logger,
      statementTimeoutMs: 1_000,
    });
    try {
      for (let i = 0; i < 8; i++) {
        const err = await db.raw('select 1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeDefined();
        logger.warn({ err }, 'stuck-run sweep failed'); // as a sweep or a run step logs what it met
      }
    } finally {
      await destroyKnex(db);
    }
    const first = lines(logs);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 40, suppressed: 0 });
    expect(logs.join('')).not.toMatch(/\\n\s+at /); // no stack in any line
    // The next window's first line says how many were left out.
    now = 10_000;
    logger.error(
      { err: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) },
      'run queue error',
    );
    const second = lines(logs);
    expect(second).toHaveLength(2);
    expect(second[1]!.suppressed).toBeGreaterThanOrEqual(8);
    expect(second[1]).toMatchObject({
      level: 50,
      err: { error_code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
    });
    // Other lines are not gated.
    logger.warn({ err: new Error('a bug') }, 'something else');
    expect(lines(logs)).toHaveLength(3);
  });
});
