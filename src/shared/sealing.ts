import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

// Sealing of the service's own secrets at rest (signing_keys.private_jwk, app_secrets.value) with
// a key-encryption key (KEK) from the environment: AES-256-GCM, a fresh 96-bit nonce per value,
// and the row the value belongs to as additional authenticated data, so a sealed value copied into
// another row does not open. A database read alone yields no usable secret.
//
// Format: `sealed:v1:<kek id>:<nonce>:<ciphertext>:<tag>` (base64url parts). The KEK id is a
// one-way fingerprint of the key; it says which key opens a value (rotation keeps old keys around
// until every value is resealed) without revealing anything about the key.

const PREFIX = 'sealed:v1:';
export const KEK_BYTES = 32;

export class SealingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealingError';
  }
}

export interface Sealer {
  /** Id of the current KEK: what `seal` uses. */
  readonly currentKeyId: string;
  seal(plaintext: string, context: string): string;
  /** Opens a value sealed with the current or a previous KEK; throws SealingError otherwise. */
  open(sealed: string, context: string): string;
  /** The id of the KEK that sealed `value`, or null when it is not a sealed value (plaintext). */
  keyIdOf(value: string): string | null;
}

/** A short one-way fingerprint of a KEK. */
export function kekId(key: Buffer): string {
  return createHash('sha256').update('openauth-workflows kek id\0').update(key).digest('hex').slice(0, 16);
}

export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** A sealer with `current` for sealing and opening, and `previous` keys for opening only. */
export function createSealer(current: Buffer, previous: readonly Buffer[] = []): Sealer {
  for (const key of [current, ...previous]) {
    if (key.length !== KEK_BYTES) throw new SealingError(`a key-encryption key must be ${KEK_BYTES} bytes`);
  }
  const currentKeyId = kekId(current);
  // Each KEK as a KeyObject made once: given the Buffer, every cipher would wrap it in a new one (a
  // refresh seals its successor's pair, so that was a measurable share of the token endpoint's CPU).
  const keys = new Map<string, KeyObject>();
  for (const key of [current, ...previous]) keys.set(kekId(key), createSecretKey(key));
  const currentKey = keys.get(currentKeyId)!;

  return {
    currentKeyId,
    seal(plaintext, context) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', currentKey, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [currentKeyId, nonce, ciphertext, cipher.getAuthTag()].map((p) =>
        typeof p === 'string' ? p : p.toString('base64url'),
      );
      return PREFIX + parts.join(':');
    },
    open(sealed, context) {
      if (!isSealed(sealed))
        throw new SealingError(`${context} is not sealed (run the migrations: npm run -s admin -- migrate)`);
      const [id, nonce, ciphertext, tag, extra] = sealed.slice(PREFIX.length).split(':');
      if (!id || nonce === undefined || ciphertext === undefined || tag === undefined || extra !== undefined) {
        throw new SealingError(`${context} is not a well-formed sealed value`);
      }
      const key = keys.get(id);
      if (!key) {
        throw new SealingError(
          `${context} was sealed with key-encryption key ${id}, which is neither SECRETS_KEY (${currentKeyId}) nor in SECRETS_KEY_PREVIOUS`,
        );
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new SealingError(
          `${context} does not open with key-encryption key ${id}: altered, or sealed for another row`,
        );
      }
    },
    keyIdOf(value) {
      return isSealed(value) ? (value.slice(PREFIX.length).split(':')[0] ?? null) : null;
    },
  };
}
