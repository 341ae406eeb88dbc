// The pace of one user's node executions in one process (USER_STEPS_PER_SECOND), like Temporal
// Cloud's actions per second per namespace. A run's steps are cheap alone, but a nested map keeps
// thousands in flight and each is written to the store: unpaced, one user's maps made ~8,000 steps
// a second and another user's one-node runs waited 2-5x longer for the store (bench row 11). Each
// user may start `rate` steps at once after a quiet second, then `rate` a second; a step past that
// waits for its turn (first come, first served within the user), and other users' steps do not wait.

/** How long an idle owner's entry is kept (their burst is whole again by then). */
const FORGET_AFTER_MS = 1000;

export interface PaceStats {
  /** Steps that waited for their turn since the process started. */
  paced: number;
  /** Steps waiting now. */
  waiting: number;
}

export class StepPacer {
  /** When each owner's next step may start, on the clock of `now`. */
  private readonly nextAt = new Map<string, number>();
  private readonly intervalMs: number;
  private readonly burstMs: number;
  private readonly now: () => number;
  private counts: PaceStats = { paced: 0, waiting: 0 };
  private forgottenAt = 0;

  /** `rate` steps a second per owner, `rate` at once after a quiet second. */
  constructor(rate: number, now: () => number = Date.now) {
    this.intervalMs = 1000 / rate;
    // The first of a burst starts at its own time, the rate-1 others ahead of it.
    this.burstMs = 1000 - this.intervalMs;
    this.now = now;
  }

  /** Resolves when the owner's step may start; rejects with the signal's reason if it is aborted first. */
  take(owner: string, signal?: AbortSignal): Promise<void> {
    const now = this.now();
    this.forgetIdle(now);
    // The owner's turns are spaced by intervalMs; one idle for a second may take a second's worth at once.
    const at = Math.max(this.nextAt.get(owner) ?? 0, now - this.burstMs);
    this.nextAt.set(owner, at + this.intervalMs);
    const wait = at - now;
    if (wait <= 0) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    this.counts.paced += 1;
    this.counts.waiting += 1;
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        this.counts.waiting -= 1;
        signal?.removeEventListener('abort', aborted);
      };
      const timer = setTimeout(() => {
        done();
        resolve();
      }, Math.ceil(wait));
      const aborted = () => {
        clearTimeout(timer);
        done();
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  stats(): PaceStats {
    return { ...this.counts };
  }

  /** Drops, at most once a second, the owners whose burst is whole again: the map holds the active ones only. */
  private forgetIdle(now: number): void {
    if (now - this.forgottenAt < FORGET_AFTER_MS) return;
    this.forgottenAt = now;
    for (const [owner, at] of this.nextAt) if (at < now - this.burstMs) this.nextAt.delete(owner);
  }
}
