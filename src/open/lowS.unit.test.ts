import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLowSSignature, toLowS } from './lowS.ts';

// Signatures made and checked with node:crypto (IEEE P1363 r||s, as JWS ES256 carries them), so
// the rule is judged by another implementation than the one under test.
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecdsa = { dsaEncoding: 'ieee-p1363' } as const;

function jwsOf(payload: string): { input: string; signature: Buffer } {
  const input = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  return { input, signature: sign('sha256', Buffer.from(input), { key: privateKey, ...ecdsa }) };
}
const verifies = (input: string, signature: Buffer) =>
  verify('sha256', Buffer.from(input), { key: publicKey, ...ecdsa }, signature);

/** The other spelling of a signature, (r, n - s), with n read as the verifier's curve order. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
function twin(signature: Buffer): Buffer {
  const s = BigInt(`0x${signature.subarray(32).toString('hex')}`);
  const out = Buffer.from(signature);
  Buffer.from((N - s).toString(16).padStart(64, '0'), 'hex').copy(out, 32);
  return out;
}
const sOf = (signature: Buffer) => BigInt(`0x${signature.subarray(32).toString('hex')}`);
const withS = (s: bigint) => Buffer.concat([Buffer.alloc(32, 7), Buffer.from(s.toString(16).padStart(64, '0'), 'hex')]);

describe('low-S ES256 signatures', () => {
  it('the twin (r, n - s) of a signature verifies too: the malleability the rule closes', () => {
    const { input, signature } = jwsOf('{"sub":"1"}');
    expect(verifies(input, signature)).toBe(true);
    expect(verifies(input, twin(signature))).toBe(true);
    expect(twin(signature).equals(signature)).toBe(false);
  });

  it('accepts exactly one of the two spellings of every signature', () => {
    for (let i = 0; i < 40; i++) {
      const { signature } = jwsOf(`{"n":${i}}`);
      const forms = [signature, twin(signature)].map((s) => isLowSSignature(s.toString('base64url')));
      expect(forms.filter(Boolean)).toHaveLength(1);
    }
  });

  it('toLowS turns either spelling into the accepted one, which still verifies', () => {
    for (let i = 0; i < 40; i++) {
      const { input, signature } = jwsOf(`{"n":${i}}`);
      const low = [signature, twin(signature)].find((s) => sOf(s) <= N / 2n)!;
      for (const form of [signature, twin(signature)]) {
        const jws = toLowS(`${input}.${form.toString('base64url')}`);
        expect(jws).toBe(`${input}.${low.toString('base64url')}`);
        const encoded = jws.slice(jws.lastIndexOf('.') + 1);
        expect(isLowSSignature(encoded)).toBe(true);
        expect(verifies(input, Buffer.from(encoded, 'base64url'))).toBe(true);
      }
    }
  });

  it('draws the line at n/2: s = floor(n/2) is low, one more is not', () => {
    expect(isLowSSignature(withS(N / 2n).toString('base64url'))).toBe(true);
    expect(isLowSSignature(withS(N / 2n + 1n).toString('base64url'))).toBe(false);
    expect(isLowSSignature(withS(1n).toString('base64url'))).toBe(true);
    expect(toLowS(`a.b.${withS(N / 2n + 1n).toString('base64url')}`)).toBe(
      `a.b.${withS(N / 2n).toString('base64url')}`,
    );
  });

  it('refuses every other spelling of the bytes: wrong length, padding, stray trailing bits, other alphabets', () => {
    const { signature } = jwsOf('{}');
    const low = sOf(signature) <= N / 2n ? signature : twin(signature);
    const encoded = low.toString('base64url');
    expect(isLowSSignature(encoded)).toBe(true);
    expect(isLowSSignature(low.subarray(0, 63).toString('base64url'))).toBe(false);
    expect(isLowSSignature(Buffer.concat([low, Buffer.from([0])]).toString('base64url'))).toBe(false);
    expect(isLowSSignature(`${encoded}==`)).toBe(false);
    expect(isLowSSignature(low.toString('base64'))).toBe(false); // padded
    // 64 bytes are 85 characters and 2 spare bits: setting them spells the same bytes differently.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spare = `${encoded.slice(0, -1)}${last[last.indexOf(encoded.at(-1)!) | 1]}`;
    expect(Buffer.from(spare, 'base64url').equals(low)).toBe(true);
    expect(isLowSSignature(spare)).toBe(false);
    expect(isLowSSignature('')).toBe(false);
  });

  it('refuses the standard base64 alphabet (+ and /), which Buffer would decode to the same bytes', () => {
    let low: Buffer;
    do {
      const { signature } = jwsOf(`{"r":${Math.random()}}`);
      low = sOf(signature) <= N / 2n ? signature : twin(signature);
    } while (!/[-_]/.test(low.toString('base64url')));
    const standard = low.toString('base64').replace(/=+$/, '');
    expect(Buffer.from(standard, 'base64url').equals(low)).toBe(true);
    expect(isLowSSignature(standard)).toBe(false);
    expect(isLowSSignature(low.toString('base64url'))).toBe(true);
  });
});
