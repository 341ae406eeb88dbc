import { createHash } from 'node:crypto';
import { CompactSign } from 'jose';
import type { AppContext } from '../context.ts';
import { toLowS } from '../open/lowS.ts';
import { isSigningAlg, keyRing, type SigningAlg } from '../open/signingKeys.ts';
import { publicClientIdOf } from './metadataDocuments.ts';

// OpenID Connect ID tokens (Core 1.0, 2 and 3.1.3.6): JWTs signed with the service's signing keys,
// the ones /.well-known/jwks.json publishes (src/open/signingKeys.ts), so a client verifies them
// with the jwks_uri of the discovery document. RS256 unless the client registered
// id_token_signed_response_alg: ES256 (OIDC Dynamic Client Registration 1.0, 2: RS256 is the
// default, and OIDC Discovery 1.0 requires an OP to offer it); never an algorithm the client did
// not register. Their `typ` is JWT and their audience the client: neither a proxy token's
// (`at+jwt`, the gateway's audience), so neither passes for the other.

const utf8 = new TextEncoder();

export interface IdTokenSubject {
  userId: number;
  clientId: string;
  /** The client's id_token_signed_response_alg (applications.id_token_signed_response_alg). */
  alg: string;
  /** The access token issued with it: `at_hash` binds the two (3.1.3.6). */
  accessToken: string;
  /** When the user logged in, epoch milliseconds; null when unknown (a code from before migration 0020). */
  authTime: number | null;
  /** The authorization request's nonce, on the code exchange only (12.2: a refresh's has none). */
  nonce?: string | null | undefined;
}

/**
 * 3.1.3.6: base64url of the left half of the hash of the access token's ASCII, with the hash of
 * the ID token's `alg`: SHA-256 for both RS256 and ES256.
 */
export function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

function idTokenAlg(registered: string): SigningAlg {
  // The store holds only values the apps service checked; anything else is a bug, never a fallback.
  if (!isSigningAlg(registered)) throw new Error(`unsupported id_token_signed_response_alg "${registered}"`);
  return registered;
}

/**
 * An ID token for the user, valid ID_TOKEN_TTL_SECONDS. `azp` is left out: it is needed only when
 * the token has several audiences (2), and ours has the one client.
 */
export async function signIdToken(ctx: AppContext, subject: IdTokenSubject, nowMs = Date.now()): Promise<string> {
  const alg = idTokenAlg(subject.alg);
  const key = await keyRing(ctx).signingKey(alg);
  const iat = Math.floor(nowMs / 1000);
  const claims = {
    iss: ctx.config.BASE_URL,
    sub: String(subject.userId),
    // A metadata-document client checks its URL, not the id it is stored under.
    aud: await publicClientIdOf(ctx, subject.clientId),
    exp: iat + ctx.config.ID_TOKEN_TTL_SECONDS,
    iat,
    ...(subject.authTime === null ? {} : { auth_time: Math.floor(subject.authTime / 1000) }),
    ...(subject.nonce ? { nonce: subject.nonce } : {}),
    at_hash: atHash(subject.accessToken),
  };
  const jws = await new CompactSign(utf8.encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .sign(key.key);
  // ES256: the one signature form the service's own verifiers accept (lowS.ts); any verifier accepts it.
  return key.alg === 'ES256' ? toLowS(jws) : jws;
}
