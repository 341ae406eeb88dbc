import { hash, randomBytes, randomFillSync, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * A new opaque secret: `${prefix}_` + 32 random bytes in base64url (256 bits). The type prefix makes
 * leaked tokens scannable, like GitHub's `gho_`. Prefixes in use: `gho` OAuth access token, `ghr`
 * refresh token, `oac` authorization code, `sk` raw access token (API key), `cs` client secret.
 */
export function newToken(prefix: string): string {
  return `${prefix}_${randomFromPool(32).toString('base64url')}`;
}

/**
 * Random bytes from the CSPRNG, drawn 4 KiB at a time and each handed out once: one call into
 * OpenSSL per 128 tokens instead of one per token (it was 3% of the refresh grant's CPU, two tokens
 * a request), as Node's own randomUUID() keeps a cache.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomFromPool(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  // A copy: the pool's bytes are overwritten on the next refill.
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

/** A public OAuth client identifier: `app_` + 20 hex characters. */
export function newClientId(): string {
  return `app_${randomBytes(10).toString('hex')}`;
}

/**
 * SHA-256 hex of a token, as stored at rest. Our tokens carry 256 bits of entropy, so a fast hash
 * is enough (no dictionary to attack) and keeps lookups by hash indexable.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time string comparison (length differences return false without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    // Still spend a comparison so timing does not depend on where the strings differ.
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

// Passwords: scrypt at OWASP's minimum (Password Storage Cheat Sheet): N=2^17, r=8, p=1, which
// takes 128 MiB per hash (128 * N * r bytes). Node runs scrypt on the libuv thread pool (4 threads
// by default), so concurrent logins hold at most 4 * 128 MiB. PASSWORD_HASH_COST (log2 N) may only
// be lowered outside production: the test suite creates hundreds of users (vitest.config.ts).
export const DEFAULT_PASSWORD_HASH_COST = 17;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const KEY_LENGTH = 32;
// A stored hash names its own parameters; above these bounds it is refused, not computed (a
// corrupt or planted row must not make one login allocate gigabytes).
const MAX_N = 2 ** 20;
const MAX_R = 16;
const MAX_P = 4;

let passwordHashCost = DEFAULT_PASSWORD_HASH_COST;

/** The scrypt cost (log2 N) of new password hashes: the service and the admin CLI set PASSWORD_HASH_COST here. */
export function setPasswordHashCost(log2N: number): void {
  passwordHashCost = log2N;
}

function scryptAsync(
  password: string,
  salt: Buffer,
  N: number,
  r: number,
  p: number,
  keyLength: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem: Node's default (32 MiB) is below what N=2^17 needs (128 * N * r bytes); allow twice that.
    scrypt(password.normalize('NFC'), salt, keyLength, { N, r, p, maxmem: 256 * N * r * p }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

interface StoredHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function parseHash(stored: string): StoredHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (
    ![N, r, p].every(Number.isSafeInteger) ||
    N < 2 ||
    N > MAX_N ||
    (N & (N - 1)) !== 0 ||
    r < 1 ||
    r > MAX_R ||
    p < 1 ||
    p > MAX_P
  )
    return null;
  return { N, r, p, salt: Buffer.from(parts[4]!, 'base64url'), hash: Buffer.from(parts[5]!, 'base64url') };
}

/** `scrypt$N$r$p$salt$hash` (salt and hash base64url): parameters travel with the hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** passwordHashCost;
  const key = await scryptAsync(password, salt, N, SCRYPT_R, SCRYPT_P, KEY_LENGTH);
  return ['scrypt', N, SCRYPT_R, SCRYPT_P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed || parsed.hash.length === 0) return false;
  const key = await scryptAsync(password, parsed.salt, parsed.N, parsed.r, parsed.p, parsed.hash.length);
  return key.length === parsed.hash.length && timingSafeEqual(key, parsed.hash);
}

/** Whether a stored hash is cheaper than what hashPassword makes now: rehash it at the next successful login. */
export function passwordNeedsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return !parsed || parsed.N < 2 ** passwordHashCost || parsed.r < SCRYPT_R || parsed.p < SCRYPT_P;
}
