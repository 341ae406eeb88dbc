import { createHash, randomUUID, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { CompactSign, errors, jwtVerify } from 'jose';
import type { AppContext } from '../context.ts';
import { isLowSSignature, toLowS } from './lowS.ts';
import { keyRing, PROXY_TOKEN_ALG } from './signingKeys.ts';
import { claimsOf, type ProxyClaims, type ProxyTokenSubject } from './proxyTokenClaims.ts';

export type { ProxyClaims, ProxyTokenSubject } from './proxyTokenClaims.ts';

// Proxy tokens (DESIGN.md "Proxy token"): short-lived ES256 JWTs that let a third-party app call
// the user's serverless API on behalf of one raw access token, without ever seeing that token.

/** RFC 9068 2.1: an access token JWT is typed, so an ID token or another JWT cannot pass for one. */
const PROXY_TOKEN_TYP = 'at+jwt';

/** The audience of proxy tokens: the gateway of this service, never its OAuth or workflow APIs. */
export function proxyTokenAudience(ctx: AppContext): string {
  return `${ctx.config.BASE_URL}/serverless`;
}

const utf8 = new TextEncoder();

/**
 * Signs a proxy token valid for PROXY_TOKEN_TTL_SECONDS from `nowMs`. The caller must already hold
 * the signing key (see issueProxyToken in tokens.ts for why the order matters).
 *
 * jose's CompactSign (a JWS compact serialization, RFC 7515 7.1) with the key as a CryptoKey, the
 * cheapest form jose takes: a KeyObject costs a lookup of its converted CryptoKey per call, and
 * SignJWT re-checks claims built here (CPU per signature in docs/benchmarks-history.md). Then the
 * signature's low-S form (lowS.ts), the only one verifiers accept.
 */
export async function signProxyToken(
  ctx: AppContext,
  // Never an RSA key: a SigningKey<'RS256'> does not fit, and jose refuses one for ES256 anyway.
  signingKey: { kid: string; key: CryptoKey | KeyObject; alg?: typeof PROXY_TOKEN_ALG },
  subject: ProxyTokenSubject,
  nowMs = Date.now(),
): Promise<{ token: string; expiresIn: number; claims: ProxyClaims }> {
  const iat = Math.floor(nowMs / 1000);
  const expiresIn = ctx.config.PROXY_TOKEN_TTL_SECONDS;
  const jti = randomUUID();
  const payload = {
    iss: ctx.config.BASE_URL,
    sub: String(subject.userId),
    aud: proxyTokenAudience(ctx),
    iat,
    exp: iat + expiresIn,
    jti,
    client_id: subject.clientId,
    token_id: subject.accessTokenId,
    namespace: subject.namespace,
    usage_scenario: subject.usageScenario,
    aid: subject.authorizationId,
    ...(subject.chainId === undefined ? {} : { cid: subject.chainId }),
    // RFC 9449 6.1: bound to the same key as the access token it was minted from.
    ...(subject.jkt === undefined ? {} : { cnf: { jkt: subject.jkt } }),
  };
  const jws = await new CompactSign(utf8.encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: PROXY_TOKEN_ALG, kid: signingKey.kid, typ: PROXY_TOKEN_TYP })
    .sign(signingKey.key);
  return { token: toLowS(jws), expiresIn, claims: { ...subject, jti, exp: iat + expiresIn } };
}

/**
 * The claims of a proxy token whose signature (a published key, by `kid`), `typ`, `iss`, `aud` and
 * `exp` check out; null otherwise. Whether its grant and raw token still stand is the caller's
 * next question (proxyTokenAuth.ts).
 */
export async function verifyProxyToken(ctx: AppContext, token: string): Promise<ProxyClaims | null> {
  const verified = verifiedTokens(ctx);
  const digest = createHash('sha256').update(token).digest('base64url');
  const known = verified.get(digest);
  if (known) {
    if (known.exp > Math.floor(Date.now() / 1000)) return known;
    verified.delete(digest);
    return null;
  }
  const claims = await verifySignatureAndClaims(ctx, token);
  if (claims) verified.set(digest, claims);
  return claims;
}

/**
 * Proxy tokens whose signature and claims checked out, by SHA-256 of the token, until they expire:
 * an app calls the gateway many times with one token, and an ES256 verification costs more CPU
 * than the rest of such a request (docs/benchmarks-history.md). Only this check is remembered; whether the
 * grant and the raw token still stand is read on every call (proxyTokenAuth.ts), so revoking
 * still refuses the very next call. At most this many, the least recently used out first.
 */
const VERIFIED_TOKENS_MAX = 10_000;
const verifiedByContext = new WeakMap<AppContext, LRUCache<string, ProxyClaims>>();

function verifiedTokens(ctx: AppContext): LRUCache<string, ProxyClaims> {
  let verified = verifiedByContext.get(ctx);
  if (!verified) {
    verified = new LRUCache({ max: VERIFIED_TOKENS_MAX });
    verifiedByContext.set(ctx, verified);
  }
  return verified;
}

async function verifySignatureAndClaims(ctx: AppContext, token: string): Promise<ProxyClaims | null> {
  // The (r, n - s) twin of a token we signed verifies too: refuse every form but ours (lowS.ts).
  if (!isLowSSignature(token.slice(token.lastIndexOf('.') + 1))) return null;
  const ring = keyRing(ctx);
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? await ring.verificationKey(header.kid) : undefined;
        if (!key) throw new errors.JWKSNoMatchingKey();
        return key;
      },
      {
        algorithms: [PROXY_TOKEN_ALG],
        typ: PROXY_TOKEN_TYP,
        issuer: ctx.config.BASE_URL,
        audience: proxyTokenAudience(ctx),
        requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      },
    );
    return claimsOf(payload);
  } catch (err) {
    if (err instanceof errors.JOSEError) return null;
    throw err;
  }
}
