import type { Logger } from 'pino';

/** How long one warn line stands for every 503 that follows it. */
export const OUTAGE_WINDOW_MS = 10_000;

/**
 * 503s during a database or queue outage: the first of each window is logged at `warn` with how
 * many were left out since the previous line; the rest are counted, not written. A 503 is the
 * service working as designed (shedding load while a dependency is away), not an error, and one
 * line per request buried the logs (issue 32: 12,608 error lines in one outage).
 */
export class OutageLog {
  private windowStart = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  private readonly logger: Logger;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(logger: Logger, windowMs = OUTAGE_WINDOW_MS, now: () => number = Date.now) {
    this.logger = logger;
    this.windowMs = windowMs;
    this.now = now;
  }

  /** Records one 503; writes a line only when it opens a new window. */
  record(line: Record<string, unknown>): void {
    const now = this.now();
    if (now - this.windowStart < this.windowMs) {
      this.suppressed += 1;
      return;
    }
    this.logger.warn({ ...line, suppressed: this.suppressed, windowMs: this.windowMs }, 'service unavailable (503); later 503s in this window are counted, not logged');
    this.windowStart = now;
    this.suppressed = 0;
  }
}
