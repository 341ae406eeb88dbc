import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSealer, isSealed, kekId } from './sealing.ts';

describe('sealing of secrets at rest (AES-256-GCM with a key-encryption key)', () => {
  const kek = randomBytes(32);
  const sealer = createSealer(kek);

  it('seals to an opaque value that opens only with the same key and row', () => {
    const sealed = sealer.seal('the session key', 'app_secrets.value:session_key');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('session key');
    expect(sealer.keyIdOf(sealed)).toBe(kekId(kek));
    expect(sealer.open(sealed, 'app_secrets.value:session_key')).toBe('the session key');
    expect(() => sealer.open(sealed, 'app_secrets.value:other')).toThrow(/sealed for another row/);
  });

  it('uses a fresh nonce every time', () => {
    expect(sealer.seal('x', 'c')).not.toBe(sealer.seal('x', 'c'));
  });

  it('refuses an altered value, plaintext, and a value of a key it does not hold, naming that key', () => {
    const sealed = sealer.seal('secret', 'c');
    const parts = sealed.split(':');
    const ciphertext = Buffer.from(parts[4]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[4] = ciphertext.toString('base64url');
    expect(() => sealer.open(parts.join(':'), 'c')).toThrow(/altered/);
    expect(() => sealer.open('{"d":"plain"}', 'c')).toThrow(/is not sealed/);
    const stranger = createSealer(randomBytes(32));
    expect(() => stranger.open(sealed, 'c')).toThrow(
      new RegExp(`sealed with key-encryption key ${kekId(kek)}, which is neither SECRETS_KEY`),
    );
  });

  it('opens values of a previous key and seals only with the current one (rotation)', () => {
    const next = randomBytes(32);
    const rotated = createSealer(next, [kek]);
    const old = sealer.seal('secret', 'c');
    expect(rotated.open(old, 'c')).toBe('secret');
    expect(rotated.keyIdOf(rotated.seal('secret', 'c'))).toBe(kekId(next));
  });

  it('accepts only 32-byte keys', () => {
    expect(() => createSealer(randomBytes(16))).toThrow(/32 bytes/);
  });
});
