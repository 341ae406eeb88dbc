// The `Prefer: wait` requests held open on this API process (router.ts answerWithWait): bounded per
// API key (WAITS_PER_KEY) and per user (WAITS_PER_USER), as event streams are (streamSlots.ts).
// One key held 4,000 waits on one process; each is a socket and a listener until its run ends.
// Past a bound the wait is declined, not refused: RFC 7240 lets a server ignore a preference, and
// the request is answered at once as without one (no Preference-Applied), which every client
// already handles (a wait that ran out), so none meets a new error.

export interface WaitLimits {
  perKey: number;
  perUser: number;
}

export class WaitSlots {
  private readonly perKey = new Map<number, number>();
  private readonly perUser = new Map<number, number>();
  private readonly limits: WaitLimits;
  private held = 0;
  private readonly draining = new AbortController();

  constructor(limits: WaitLimits) {
    this.limits = limits;
  }

  /**
   * A slot for a wait of `keyId` (an API key; none for a trigger URL's) and its user: its release
   * (call it once, however the wait ends), or undefined past either bound.
   */
  tryTake(keyId: number | undefined, userId: number): (() => void) | undefined {
    if (this.draining.signal.aborted) return undefined; // the process stops: answered at once
    const keys = keyId === undefined ? 0 : (this.perKey.get(keyId) ?? 0);
    const users = this.perUser.get(userId) ?? 0;
    if ((keyId !== undefined && keys >= this.limits.perKey) || users >= this.limits.perUser) return undefined;
    if (keyId !== undefined) this.perKey.set(keyId, keys + 1);
    this.perUser.set(userId, users + 1);
    this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      if (keyId !== undefined) decrement(this.perKey, keyId);
      decrement(this.perUser, userId);
    };
  }

  /**
   * Aborts when the process begins to stop (drain): every wait held then is answered at once with
   * its run as it stands (a start: 202 with Location, as a wait that ran out), and none is taken after.
   */
  get drained(): AbortSignal {
    return this.draining.signal;
  }

  /** The process stops (SIGTERM): ends every held wait now and declines new ones. */
  drain(): void {
    this.draining.abort();
  }

  /** Waits held now. */
  get size(): number {
    return this.held;
  }
}

function decrement(counts: Map<number, number>, id: number): void {
  const n = (counts.get(id) ?? 1) - 1;
  if (n <= 0) counts.delete(id);
  else counts.set(id, n);
}
