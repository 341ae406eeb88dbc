import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * A new opaque secret: `${prefix}_` + 32 random bytes in base64url (256 bits). The type prefix makes
 * leaked tokens scannable, like GitHub's `gho_`. Prefixes in use: `gho` OAuth access token, `ghr`
 * refresh token, `oac` authorization code, `sk` raw access token (API key), `cs` client secret.
 */
export function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
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
  return createHash('sha256').update(token, 'utf8').digest('hex');
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

// scrypt parameters: N=2^15, r=8, p=1 (OWASP's minimum for scrypt is N=2^17 with p=1 or an
// equivalent; 2^15 keeps logins and tests fast while memory cost stays at 32 MiB).
const SCRYPT = { N: 32768, r: 8, p: 1, keyLength: 32 };

function scryptAsync(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { N, r, p, maxmem: 256 * N * r }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$hash` (salt and hash base64url): parameters travel with the hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText, hashText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hashText, 'base64url');
  const key = await scryptAsync(password, Buffer.from(saltText, 'base64url'), Number(n), Number(r), Number(p), expected.length);
  return key.length === expected.length && timingSafeEqual(key, expected);
}
