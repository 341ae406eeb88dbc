import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { accessTokenHash } from '../../src/http/dpop.ts';

/** A client's DPoP key pair and its public JWK, for signing proofs in tests. */
export interface DpopKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  alg: string;
}

export async function dpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey), alg };
}

export interface ProofOptions {
  htm?: string;
  htu: string;
  accessToken?: string;
  nonce?: string;
  iat?: number;
  jti?: string;
  /** Overrides of the header (typ, alg, jwk). */
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
}

/** A DPoP proof (RFC 9449 4.2) as a client signs it. */
export async function dpopProof(key: DpopKey, o: ProofOptions): Promise<string> {
  return new SignJWT({
    htm: o.htm ?? 'GET',
    htu: o.htu,
    jti: o.jti ?? randomUUID(),
    ...(o.accessToken === undefined ? {} : { ath: accessTokenHash(o.accessToken) }),
    ...(o.nonce === undefined ? {} : { nonce: o.nonce }),
    ...o.claims,
  })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: key.alg, jwk: key.publicJwk, ...o.header })
    .setIssuedAt(o.iat ?? Math.floor(Date.now() / 1000))
    .sign(key.privateKey);
}
