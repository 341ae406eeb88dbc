import { LRUCache } from 'lru-cache';
import { hashToken } from './crypto.ts';

/**
 * The lease-based principal cache. A principal (bearer, API key, proxy token; also the raw token that
 * token detail issues a proxy token for, src/open/tokens.ts) read from the store may be served from
 * this process's cache for at most `leaseMs`, counted from the moment its read BEGAN.
 * Every path that revokes calls `revocationLease.settle()` after its commit, so it answers only once
 * the lease has passed since then. Whatever any process read before the commit began before the commit, so its
 * lease has run out by the time the revoking call returns: from then on, no process honours the token.
 * Only successful lookups are cached (a refused token is read again each time; a read that throws is
 * shared with the requests that arrived during it, as a refusal is, and never cached). `leaseMs` 0 disables
 * both the cache and the wait.
 */
export class PrincipalLease {
  readonly leaseMs: number;
  private readonly entries: LRUCache<string, { principal: object; until: number }>;
  /** Reads under way, by key: requests that arrive during one share it (see `principal`). */
  private readonly reads = new Map<
    string,
    { began: number; answer: Promise<{ principal: object; expiresAt?: number } | null> }
  >();
  /** A monotonic clock in milliseconds (a test may drive its own). */
  private readonly now: () => number;

  constructor(leaseMs: number, options: { maxEntries?: number; now?: () => number } = {}) {
    this.leaseMs = leaseMs;
    this.entries = new LRUCache({ max: options.maxEntries ?? 10_000 });
    this.now = options.now ?? (() => performance.now());
    revocationLease.expect(leaseMs);
  }

  /**
   * The principal for `token` of this `kind`: from the cache while its lease lasts, else from `read`.
   * `read` answers the principal and, when the credential itself expires, its expiry (epoch ms).
   */
  async principal<P extends object>(
    kind: string,
    token: string,
    read: () => Promise<{ principal: P; expiresAt?: number } | null>,
  ): Promise<P | null> {
    if (this.leaseMs <= 0) return (await read())?.principal ?? null;
    // Keyed by the token's hash: the cache never holds a credential in plaintext.
    const key = `${kind}:${hashToken(token)}`;
    const arrived = this.now();
    const cached = this.entries.get(key);
    if (cached && arrived < cached.until) return cached.principal as P;
    // A read of this token under way, begun less than a lease ago, answers this request too, as
    // its cache entry would: when a lease runs out, the 32 requests in flight made 32 reads of one
    // token instead of one. A refusal is shared only with requests that arrived during
    // its read, never cached.
    const pending = this.reads.get(key);
    if (pending && arrived < pending.began + this.leaseMs) {
      const shared = await pending.answer;
      if (!shared) return null;
      if (arrived < this.leaseEnd(pending.began, shared.expiresAt)) return shared.principal as P;
    }
    const readBegan = this.now();
    const answer = read();
    const mine = { began: readBegan, answer };
    this.reads.set(key, mine);
    let found: Awaited<typeof answer>;
    try {
      found = await answer;
    } finally {
      if (this.reads.get(key) === mine) this.reads.delete(key);
    }
    if (!found) {
      this.entries.delete(key);
      return null;
    }
    const until = this.leaseEnd(readBegan, found.expiresAt);
    const current = this.entries.get(key);
    if (!current || current.until < until) this.entries.set(key, { principal: found.principal, until });
    return found.principal;
  }

  /** The lease runs from when the read began, and never past the credential's own expiry (epoch ms). */
  private leaseEnd(readBegan: number, expiresAt: number | undefined): number {
    const expiresIn = expiresAt === undefined ? Infinity : expiresAt - Date.now();
    return readBegan + Math.min(this.leaseMs, expiresIn);
  }

  /** Whether the cache has an entry for `token` (`serving`: one whose lease still runs). */
  holds(kind: string, token: string, serving = true): boolean {
    const cached = this.entries.peek(`${kind}:${hashToken(token)}`);
    return cached !== undefined && (!serving || this.now() < cached.until);
  }
}

let longestLeaseMs = 0;

/**
 * The one helper every revoking path calls after its commit: `await revocationLease.settle()`. It
 * waits out the longest principal lease this process serves or was told of (PRINCIPAL_CACHE_MS; the
 * app registers its own, the admin CLI the configured one), since every service process is
 * configured alike. Revoking services call it themselves, so a caller cannot forget it.
 */
export const revocationLease = {
  /** Records that principals may be leased for `leaseMs` (0: no cache, no wait). */
  expect(leaseMs: number): void {
    longestLeaseMs = Math.max(longestLeaseMs, leaseMs);
  },
  /** Resolves once every lease that could predate a commit made at `committedAt` has run out. */
  async settle(committedAt = performance.now()): Promise<void> {
    const deadline = committedAt + longestLeaseMs;
    // A timer may fire a little early; wait until the monotonic clock says the lease is over.
    while (performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(deadline - performance.now()))));
    }
  },
};

const leases = new WeakMap<object, PrincipalLease>();

/** The principal lease of one app context (one per process, or per app instance in tests). */
export function principalLease(ctx: { config: { PRINCIPAL_CACHE_MS: number } }): PrincipalLease {
  let lease = leases.get(ctx);
  if (!lease) leases.set(ctx, (lease = new PrincipalLease(ctx.config.PRINCIPAL_CACHE_MS)));
  return lease;
}
