import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { sharedRateLimiter } from './sharedRateLimiter.ts';

describe.each(testDialects())('sharedRateLimiter on %s', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(dialect);
  });
  afterAll(async () => {
    await t.destroy();
  });

  it('counts the hits a flush is adding to the shared row while the row has not answered yet', async () => {
    const limiter = sharedRateLimiter(t.db, pino({ level: 'silent' }), 'test:', 3);
    try {
      for (let i = 0; i < 3; i++) expect(limiter.hit('carol')).toBeNull();
      const flushing = limiter.flush(); // its round trip to the store is under way
      expect(limiter.hit('carol')).toBeGreaterThan(0);
      expect(limiter.check('carol')).toBeGreaterThan(0);
      await flushing;
      expect(limiter.hit('carol')).toBeGreaterThan(0);
      expect(limiter.hit('dave')).toBeNull();
    } finally {
      limiter.stop();
    }
  });
});
