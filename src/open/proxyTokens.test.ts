import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derToJoseEs256 } from './proxyTokens.ts';

describe('derToJoseEs256', () => {
  it('turns OpenSSL DER signatures into the r||s that RFC 7518 3.4 asks of ES256, short and padded integers included', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const data = Buffer.from('header.payload');
    const lengths = new Set<number>();
    // About one integer in 256 is under 32 bytes (a leading zero byte dropped), and half are 33
    // (a zero byte before a high bit): 4,000 integers cover both (all but once in millions).
    for (let i = 0; i < 2000; i++) {
      const der = sign('sha256', data, privateKey);
      lengths.add(der[3]!).add(der[5 + der[3]!]!); // r's length, s's length
      const raw = derToJoseEs256(der);
      expect(raw.length).toBe(64);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
    expect([...lengths].some((n) => n < 32)).toBe(true);
    expect(lengths.has(33)).toBe(true);
  });

  it('refuses what is not a DER ECDSA signature', () => {
    expect(() => derToJoseEs256(Buffer.alloc(64))).toThrow(/not a DER ECDSA signature/);
    expect(() => derToJoseEs256(Buffer.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x02, 0x01]))).toThrow(/not a DER ECDSA signature/);
  });
});
