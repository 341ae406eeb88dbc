// The time windows of signing keys: how long a process keeps the key it loaded, how long relying
// parties keep the key set, how early a rotated-in key is published before it signs, and how long
// a retired key stays published (while a token it signed may still be presented).

/** How long a process keeps signing with the key it loaded; a rotation elsewhere reaches it within this time. */
export const CURRENT_KEY_TTL_MS = 60_000;
/** How long clients may keep /.well-known/jwks.json (its Cache-Control max-age). */
export const JWKS_MAX_AGE_SECONDS = 300;
/** Clock skew allowance between processes (which retired keys are still needed; how early a key may sign). */
export const SKEW_MS = 60_000;
/**
 * A rotated-in key is published at once and signs only this long after: the key set's cache
 * lifetime plus the clock skew between processes, so a relying party that cached the key set just
 * before the rotation has let it expire before any process (its clock a minute fast included)
 * signs with the new key. Counted from the moment the new key is stored.
 */
export const KEY_PUBLISHED_AHEAD_MS = JWKS_MAX_AGE_SECONDS * 1000 + SKEW_MS;
/** How long a retired key stays published: the longest a token it signed can live, plus the cache and skew margins. */
function retentionMs(tokenTtlSeconds: number): number {
  return tokenTtlSeconds * 1000 + CURRENT_KEY_TTL_MS + SKEW_MS;
}

/**
 * The oldest retirement time of a key still published at `now` (the store's cutoff): a key retired
 * after it stays in the key set and keeps verifying, since a token it signed may still be alive.
 */
export function publishedSince(now: number, tokenTtlSeconds: number): number {
  return now - retentionMs(tokenTtlSeconds);
}
