import type { Logger } from 'pino';

/** How long one warn line stands for every 503 that follows it. */
export const OUTAGE_WINDOW_MS = 10_000;

/**
 * 503s during a database or queue outage: the first of each window is logged at `warn` with how
 * many were left out since the previous line; the rest are counted, not written. A 503 is the
 * service working as designed (shedding load while a dependency is away), not an error, and one
 * line per request buried the logs (12,608 error lines in one outage).
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
    this.logger.warn(
      { ...line, suppressed: this.suppressed, windowMs: this.windowMs },
      'service unavailable (503); later 503s in this window are counted, not logged',
    );
    this.windowStart = now;
    this.suppressed = 0;
  }
}

/** An error as a gated line carries it: what it is, never its stack. */
function brief(err: unknown): Record<string, unknown> {
  if (typeof err !== 'object' || err === null) return { message: String(err) };
  const { name, code, message } = err as { name?: unknown; code?: unknown; message?: unknown };
  // `code` is a redacted field name (an OAuth code): the error's code goes as `error_code`.
  return { type: name, error_code: code, message };
}

/** The first line of a message (knex writes `Acquire connection error: <stack>` as one string). */
const firstLine = (message: unknown) => (typeof message === 'string' ? message.split('\n', 1)[0] : message);

/**
 * The gate of a logger's lines about the store or queue being unreachable (pino's `logMethod`
 * hook, src/http/logger.ts): knex's own connection messages, and any warn or error line whose `err`
 * is a database outage (logger.ts isOutageLine). During an outage every request, sweep and run step
 * met the same error and wrote it with its stack (~4,300 lines per process in a 90 s outage). Now the first of
 * each window is written, without stack, with how many were left out since the previous one; the
 * rest are counted.
 */
export class OutageGate {
  private windowStart = Number.NEGATIVE_INFINITY;
  private suppressed = 0;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(windowMs = OUTAGE_WINDOW_MS, now: () => number = Date.now) {
    this.windowMs = windowMs;
    this.now = now;
  }

  /**
   * The arguments to write instead of `args` (a pino call's: an optional object, then the
   * message), or undefined when the line is left out.
   */
  pass(args: unknown[]): unknown[] | undefined {
    const now = this.now();
    if (now - this.windowStart < this.windowMs) {
      this.suppressed += 1;
      return undefined;
    }
    const [first, ...rest] = args;
    const fields =
      typeof first === 'object' && first !== null && !(first instanceof Error)
        ? { ...(first as Record<string, unknown>) }
        : undefined;
    const message = fields ? rest[0] : first instanceof Error ? first.message : first;
    if (fields && 'err' in fields) fields.err = brief(fields.err);
    const line = {
      ...(fields ?? (first instanceof Error ? { err: brief(first) } : {})),
      suppressed: this.suppressed,
      windowMs: this.windowMs,
    };
    this.windowStart = now;
    this.suppressed = 0;
    return [
      line,
      `${String(firstLine(message) ?? 'store unreachable')} (later store-outage lines in this window are counted, not logged)`,
    ];
  }
}
