// Rate limits for hot paths (the token endpoint, the open, serverless and workflow APIs), shared by
// every API process without a database write per request.
//
// Each process counts hits locally and adds them to the shared row of `rate_limits` once a second;
// its verdict is the shared count it last read plus its own unflushed hits. Across N processes a
// limit may be overshot by at most what they serve in one flush interval; one process is exact.
// (Login, which is not a hot path, counts every hit in the database: src/http/rateLimitStore.ts.)
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { addRateLimitHits, readRateLimits } from './rateLimitStore.ts';

const WINDOW_MS = 60_000;
const FLUSH_MS = 1_000;
const READ_BATCH = 500;

interface Count {
  /** The shared count of the window as this process last read it. */
  shared: number;
  /** Hits of this process not yet added to the shared row. */
  pending: number;
  /** Hits being added to the shared row right now (not yet in `shared`). */
  adding: number;
  resetAt: number;
}

export interface SharedRateLimiter {
  /** Counts a hit for `key`; returns null when allowed, else the seconds to wait (Retry-After). */
  hit(key: string): number | null;
  /**
   * Like `hit` without counting: null while `key` is under its limit, else the seconds to wait. Only
   * keys this process has hit are known (with the other processes' shared count from then on).
   */
  check(key: string): number | null;
  /** Adds pending hits to the shared counts and reads them back (also runs once a second). */
  flush(): Promise<void>;
  /** Ends the flush once a second (hits are still counted; `flush()` still shares them). */
  stop(): void;
}

/**
 * Keys this process did not hit in the last second may have been spent by other processes: reads
 * their shared counts (READ_BATCH keys a query) into `counts`, for the windows still open at `now`.
 */
async function readSharedCounts(
  db: Knex,
  prefix: string,
  counts: Map<string, Count>,
  keys: string[],
  now: number,
): Promise<void> {
  for (let i = 0; i < keys.length; i += READ_BATCH) {
    const batch = keys.slice(i, i + READ_BATCH);
    const rows = await readRateLimits(
      db,
      batch.map((k) => prefix + k),
    );
    for (const key of batch) {
      const count = counts.get(key);
      const row = rows.get(prefix + key);
      if (count && row && row.resetTime && row.resetTime.getTime() > now) {
        count.shared = row.totalHits;
        count.resetAt = row.resetTime.getTime();
      }
    }
  }
}

export function sharedRateLimiter(db: Knex, logger: Logger, prefix: string, limitPerMinute: number): SharedRateLimiter {
  const counts = new Map<string, Count>();

  async function flush(): Promise<void> {
    const now = Date.now();
    const idle: string[] = [];
    for (const [key, count] of counts) {
      if (count.pending === 0) {
        if (count.resetAt <= now) counts.delete(key);
        else idle.push(key);
        continue;
      }
      // Until the row answers, these hits are in neither `pending` nor `shared`: count them as `adding`,
      // or a request in that round trip would see the limit short by them.
      count.adding = count.pending;
      count.pending = 0;
      try {
        const shared = await addRateLimitHits(db, prefix + key, count.adding, WINDOW_MS);
        count.shared = shared.totalHits;
        count.resetAt = shared.resetTime?.getTime() ?? count.resetAt;
      } catch (err) {
        count.pending += count.adding;
        throw err;
      } finally {
        count.adding = 0;
      }
    }
    await readSharedCounts(db, prefix, counts, idle, now);
  }

  const timer = setInterval(() => {
    flush().catch((err: unknown) => logger.warn({ err }, 'rate limit flush failed'));
  }, FLUSH_MS);
  timer.unref();

  const used = (count: Count) => count.shared + count.adding + count.pending;

  function countOf(key: string, now: number): Count {
    let count = counts.get(key);
    if (!count || count.resetAt <= now) {
      count = { shared: 0, pending: 0, adding: 0, resetAt: now + WINDOW_MS };
      counts.set(key, count);
    }
    return count;
  }

  return {
    hit(key) {
      const now = Date.now();
      const count = countOf(key, now);
      if (used(count) >= limitPerMinute) return Math.max(1, Math.ceil((count.resetAt - now) / 1000));
      count.pending += 1;
      return null;
    },
    check(key) {
      // A key this process never hit is not tracked (no entry, no shared read each second): a
      // check on every request must cost nothing for the keys that are never hit.
      const now = Date.now();
      const count = counts.get(key);
      if (!count || count.resetAt <= now) return null;
      return used(count) >= limitPerMinute ? Math.max(1, Math.ceil((count.resetAt - now) / 1000)) : null;
    },
    flush,
    stop: () => clearInterval(timer),
  };
}
