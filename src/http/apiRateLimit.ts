// Per-token rate limit of the open, serverless and workflow APIs, shared by every API process.
//
// These endpoints are the hot paths (user info, proxy-token detail, the gateway), so a database
// write per request is too dear. Each process counts hits locally and adds them to the shared row
// of `rate_limits` once a second; a process's verdict is the shared count it last saw plus its own
// unflushed hits. Across N processes the limit may be overshot by at most what they serve in one
// flush interval; a single process is exact.
import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { addRateLimitHits } from './rateLimitStore.ts';
import { Problem } from './problems.ts';
import type { Principal } from './principal.ts';

const WINDOW_MS = 60_000;
const FLUSH_MS = 1_000;

interface Count {
  /** The shared count of the window as this process last read it. */
  shared: number;
  /** Hits of this process not yet added to the shared row. */
  pending: number;
  resetAt: number;
}

/** The token a request spends its allowance on: one OAuth grant, or one raw access token. */
function keyOf(principal: Principal): string {
  return principal.kind === 'oauth' ? `grant:${principal.authorizationId}` : `token:${principal.accessTokenId}`;
}

export interface ApiRateLimit {
  middleware: RequestHandler;
  /** Adds pending hits to the shared counts (also runs by itself once a second). */
  flush(): Promise<void>;
  stop(): void;
}

export function apiRateLimit(db: Knex, logger: Logger, limitPerMinute: number): ApiRateLimit {
  const counts = new Map<string, Count>();

  async function flush(): Promise<void> {
    const now = Date.now();
    for (const [key, count] of counts) {
      if (count.resetAt <= now && count.pending === 0) {
        counts.delete(key);
        continue;
      }
      if (count.pending === 0) continue;
      const hits = count.pending;
      count.pending = 0;
      const shared = await addRateLimitHits(db, `api:${key}`, hits, WINDOW_MS);
      count.shared = shared.totalHits;
      count.resetAt = shared.resetTime?.getTime() ?? count.resetAt;
    }
  }

  const timer = setInterval(() => {
    flush().catch((err: unknown) => logger.warn({ err }, 'rate limit flush failed'));
  }, FLUSH_MS);
  timer.unref();

  const middleware: RequestHandler = (req, _res, next) => {
    if (!req.principal) return next();
    const key = keyOf(req.principal);
    const now = Date.now();
    let count = counts.get(key);
    if (!count || count.resetAt <= now) {
      count = { shared: 0, pending: 0, resetAt: now + WINDOW_MS };
      counts.set(key, count);
    }
    if (count.shared + count.pending >= limitPerMinute) {
      const seconds = Math.max(1, Math.ceil((count.resetAt - now) / 1000));
      return next(new Problem(429, `Rate limit of ${limitPerMinute} requests per minute for this token exceeded; retry in ${seconds} s.`, { headers: { 'Retry-After': String(seconds) } }));
    }
    count.pending += 1;
    next();
  };

  return { middleware, flush, stop: () => clearInterval(timer) };
}
