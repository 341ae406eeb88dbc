// ECDSA signatures are malleable: if (r, s) verifies, so does (r, n - s) (SEC 1 4.1.4 checks
// neither form), and WebCrypto verifies both. A proxy token would then have a second spelling that
// a holder can mint without the key: a different string (another cache entry, another log line)
// for the same claims. So the service signs only the low-S form (s <= n/2, as Bitcoin's BIP 62
// and libsecp256k1 do) and refuses the other.

/** The order n of P-256's base point (FIPS 186-5 / SEC 2 secp256r1). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
/** floor(n / 2), big-endian, to compare s with. */
const P256_HALF_ORDER = Buffer.from((P256_ORDER / 2n).toString(16).padStart(64, '0'), 'hex');

/**
 * Whether `encoded` (a compact JWS's third part) is an ES256 signature in its one accepted form:
 * canonical base64url of 64 bytes r||s (RFC 7518 3.4) with s <= n/2.
 */
export function isLowSSignature(encoded: string): boolean {
  const signature = Buffer.from(encoded, 'base64url');
  // Canonical: no padding, no stray trailing bits (another spelling of the same bytes).
  if (signature.length !== 64 || signature.toString('base64url') !== encoded) return false;
  return Buffer.compare(signature.subarray(32), P256_HALF_ORDER) <= 0;
}

/** The compact ES256 JWS `jws` with s replaced by n - s when s > n/2: the same signature, in the form verifiers accept. */
export function toLowS(jws: string): string {
  const dot = jws.lastIndexOf('.');
  const signature = Buffer.from(jws.slice(dot + 1), 'base64url');
  if (Buffer.compare(signature.subarray(32), P256_HALF_ORDER) <= 0) return jws;
  const s = BigInt(`0x${signature.subarray(32).toString('hex')}`);
  Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex').copy(signature, 32);
  return `${jws.slice(0, dot)}.${signature.toString('base64url')}`;
}
