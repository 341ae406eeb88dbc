import { randomBytes } from 'node:crypto';

// Crockford's base32 (no I, L, O, U), as ULID uses it.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID (https://github.com/ulid/spec): 48-bit millisecond time then 80 random bits, 26 base32
 * characters. Ids sort roughly by creation time and reveal nothing about row counts.
 */
export function ulid(now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += ALPHABET[bytes[i]! % 32];
  return time + random;
}

/** A public workflow id: `wf_` + ULID, e.g. `wf_01JD6Z3V8Q4X2M7N5P9R0T1W`. */
export function newWorkflowId(): string {
  return `wf_${ulid()}`;
}
