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

/**
 * A DPoP-bound access token (and the next refresh token) for a refresh token of a confidential
 * client: the token endpoint binds the new access token to the key of the refresh's proof.
 */
export async function dpopBoundRefresh(
  baseUrl: string,
  client: { clientId: string; clientSecret: string },
  refreshToken: string,
  key: DpopKey,
): Promise<{ access_token: string; token_type: string; refresh_token: string }> {
  const url = `${baseUrl}/api/open/oauth/token`;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      DPoP: await dpopProof(key, { htm: 'POST', htu: url }),
    },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
  });
  if (res.status !== 200) throw new Error(`DPoP refresh failed with ${res.status}: ${await res.text()}`);
  return (await res.json()) as { access_token: string; token_type: string; refresh_token: string };
}
