// A worker's store calls outlast a short database outage: each is retried with backoff, and only
// an outage longer than the attempt's budget gives the job back to the queue (queue.ts retries it
// later). Execution goes on meanwhile: a model call does not need the store. A call that lost a
// lock conflict (a deadlock victim: the bench's wide maps had run_steps updates deadlock) is rolled
// back by the store and made again at once, a few times, not lost.
import type { Logger } from 'pino';
import { CONFLICT_TRIES, isConnectionLost, isLockConflict } from '../db/transient.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { STORE_UNAVAILABLE } from './queue.ts';

/** How long one attempt keeps retrying a store call that cannot reach the database (backoff from 100 ms to 5 s). */
export const STORE_OUTAGE_BUDGET_MS = 60_000;

/** The store stayed unreachable through an attempt's budget; pg-boss keeps `code` as the job's output. */
export class StoreUnavailable extends Error {
  readonly code = STORE_UNAVAILABLE;
  constructor(cause: unknown) {
    super(`The store could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StoreUnavailable';
  }
}

/** A store call made to outlast an outage: `withStore` with the attempt's budget. */
export type Retried = <T>(fn: () => Promise<T>) => Promise<T>;

/** `fn`, retried with backoff while the database is unreachable, for at most `budgetMs`, and at once after a lock conflict (a few times). */
export async function withStore<T>(fn: () => Promise<T>, budgetMs: number, logger?: Logger): Promise<T> {
  const deadline = performance.now() + budgetMs;
  let delay = 100;
  let conflicts = 0;
  for (let tries = 1; ; tries++) {
    try {
      return await fn();
    } catch (err) {
      if (isLockConflict(err) && ++conflicts < CONFLICT_TRIES) {
        await new Promise((r) => setTimeout(r, 5 * 2 ** conflicts * Math.random()));
        continue;
      }
      if (!isDatabaseUnavailable(err) && !isConnectionLost(err)) throw err;
      if (performance.now() + delay > deadline) throw new StoreUnavailable(err);
      if (tries === 1) logger?.warn({ err }, 'store unreachable; a run step is retried with backoff');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}
