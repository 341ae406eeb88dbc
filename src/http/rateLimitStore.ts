// express-rate-limit's Store over the `rate_limits` table, so every API process shares one count
// per key (the memory store would give each process its own allowance). One atomic upsert per hit:
// a window that has ended restarts at 1 in the same statement, so concurrent hits from several
// processes never lose a count and never reset each other's windows.
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import type { Request } from 'express';
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';
import { hashToken } from '../shared/crypto.ts';

const KEY_LENGTH = 191; // rate_limits.key varchar(191): the longest utf8mb4 key InnoDB indexes
const SWEEP_EVERY = 1000; // hits per process between deletions of ended windows

interface Row {
  hits: number | string;
  reset_at: number | string;
}

const info = (row: Row): ClientRateLimitInfo => ({
  totalHits: Number(row.hits),
  resetTime: new Date(Number(row.reset_at)),
});

/**
 * Adds `hits` to the row `id` in one atomic statement and returns the window's total: a window that
 * has ended restarts at `hits` in the same statement, so concurrent adds from several processes
 * never lose a count and never reset each other's windows.
 */
export async function addRateLimitHits(
  db: Knex,
  id: string,
  hits: number,
  windowMs: number,
): Promise<ClientRateLimitInfo> {
  const now = Date.now();
  const resetAt = now + windowMs;
  if (dialectOf(db) === 'mysql') {
    // MySQL has no RETURNING: upsert, then read the row we just locked, in one transaction.
    // Assignments apply left to right, so reset_at's IF still sees the old reset_at.
    return db.transaction(async (trx) => {
      await trx.raw(
        'INSERT INTO rate_limits (`key`, hits, reset_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE ' +
          'hits = IF(reset_at <= ?, VALUES(hits), hits + VALUES(hits)), reset_at = IF(reset_at <= ?, VALUES(reset_at), reset_at)',
        [id, hits, resetAt, now, now],
      );
      return info((await trx('rate_limits').select('hits', 'reset_at').where('key', id).first()) as Row);
    });
  }
  const result = await db.raw<{ rows: Row[] }>(
    'INSERT INTO rate_limits (key, hits, reset_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET ' +
      'hits = CASE WHEN rate_limits.reset_at <= ? THEN EXCLUDED.hits ELSE rate_limits.hits + EXCLUDED.hits END, ' +
      'reset_at = CASE WHEN rate_limits.reset_at <= ? THEN EXCLUDED.reset_at ELSE rate_limits.reset_at END ' +
      'RETURNING hits, reset_at',
    [id, hits, resetAt, now, now],
  );
  return info(result.rows[0]!);
}

/** The current counts of the given rows, by key (absent rows are missing from the map). */
export async function readRateLimits(db: Knex, ids: string[]): Promise<Map<string, ClientRateLimitInfo>> {
  const rows = (await db('rate_limits').select('key', 'hits', 'reset_at').whereIn('key', ids)) as (Row & {
    key: string;
  })[];
  return new Map(rows.map((row) => [row.key, info(row)]));
}

/** A Store whose keys are `${prefix}${key}` rows of `rate_limits`; give each limiter its own prefix. */
export function databaseRateLimitStore(db: Knex, prefix: string): Store {
  let windowMs = 60_000;
  let hitsSinceSweep = 0;
  // Keys hold user input (a login name): long ones are hashed to fit the column.
  const rowKey = (key: string) => {
    const full = prefix + key;
    return full.length <= KEY_LENGTH ? full : `${prefix}sha256:${hashToken(full)}`;
  };

  async function sweep(now: number): Promise<void> {
    hitsSinceSweep = 0;
    await db('rate_limits').where('reset_at', '<', now).delete();
  }

  return {
    prefix,
    localKeys: false,
    init(options: Options) {
      windowMs = options.windowMs;
    },

    async increment(key: string): Promise<IncrementResponse> {
      const result = await addRateLimitHits(db, rowKey(key), 1, windowMs);
      if (++hitsSinceSweep >= SWEEP_EVERY) await sweep(Date.now());
      return result;
    },

    async decrement(key: string): Promise<void> {
      await db('rate_limits').where('key', rowKey(key)).where('hits', '>', 0).decrement('hits', 1);
    },

    async get(key: string): Promise<ClientRateLimitInfo | undefined> {
      const row = (await db('rate_limits').select('hits', 'reset_at').where('key', rowKey(key)).first()) as
        Row | undefined;
      return row && Number(row.reset_at) > Date.now() ? info(row) : undefined;
    },

    async resetKey(key: string): Promise<void> {
      await db('rate_limits').where('key', rowKey(key)).delete();
    },
  };
}

/** Seconds until the limited key's window ends (at least 1), for Retry-After; the window when unknown. */
export function retryAfterSeconds(req: Request, windowMs: number): number {
  const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  const ms = resetTime ? resetTime.getTime() - Date.now() : windowMs;
  return Math.max(1, Math.ceil(ms / 1000));
}
