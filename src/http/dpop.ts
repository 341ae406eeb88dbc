import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { Knex } from 'knex';
import type { AppContext } from '../context.ts';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import { DPOP_ALGS } from '../shared/dpopErrors.ts';
import type { Sealer } from '../shared/sealing.ts';
import { SealingError } from '../shared/sealing.ts';
import { recordProofUse } from './dpopProofs.store.ts';

// DPoP proofs (RFC 9449 4.3), checked for the token endpoint and for every resource that takes an
// OAuth access token: one `DPoP` header, a JWT of typ dpop+jwt signed by the public key in its own
// header with one of DPOP_ALGS, for this method and URL (built from BASE_URL, never from the Host
// header), issued within IAT_WINDOW_S of now, never seen before (a table every process shares), with
// `ath` on a resource request, and a server nonce when one is required (RFC 9449 8, 9).

export { DPOP_ALGS };

/** A proof larger than this is refused unread: an RSA-4096 proof is about 2 kB. */
export const MAX_PROOF_LENGTH = 4096;

/** How far a proof's iat may be from now, either way (seconds): a client's clock may be off. */
export const IAT_WINDOW_S = 60;

/** Nonces live for one window and the next (RFC 9449 8: the server decides how long). */
const NONCE_WINDOW_MS = 5 * 60_000;
const NONCE_CONTEXT = 'dpop-nonce';
const MAX_CLAIM_LENGTH = 512;

/** Why a proof was refused: `use_dpop_nonce` when only a (fresh) nonce is missing (RFC 9449 8). */
export class DpopError extends Error {
  readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce';
  constructor(error: 'invalid_dpop_proof' | 'use_dpop_nonce', description: string) {
    super(description);
    this.error = error;
  }
}

/** A proof that passed every check: its key's RFC 7638 thumbprint. */
export interface DpopProof {
  jkt: string;
}

export interface DpopDeps {
  db: Knex;
  sealer: Sealer;
  baseUrl: string;
  requireNonce: boolean;
  now: () => number;
}

const invalid = (description: string) => new DpopError('invalid_dpop_proof', description);

/** base64url(SHA-256(access token)): a resource request's `ath` (RFC 9449 4.2). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url');
}

/** The request's one DPoP header; undefined when there is none. */
function proofHeader(req: Request): string | undefined {
  const values = req.headersDistinct.dpop;
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) throw invalid('Send one DPoP header.');
  const proof = values[0]!;
  if (proof.length > MAX_PROOF_LENGTH) throw invalid(`The DPoP proof is longer than ${MAX_PROOF_LENGTH} characters.`);
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw invalid('The DPoP proof is not a JWT.');
  return proof;
}

/** The URL a proof must name: BASE_URL and the request's path, without query or fragment (RFC 9449 4.3 9). */
function requestUrl(baseUrl: string, req: Request): string {
  const path = req.originalUrl.split('?')[0]!.split('#')[0]!;
  return normalizedUrl(baseUrl + path) ?? '';
}

/** The URL without query and fragment, normalized as RFC 3986 6.2.2 and 6.2.3 say (new URL does both). */
function normalizedUrl(url: string): string | null {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return null;
  }
}

/** The header's key, refused when it is no public key (a symmetric key, or private members). */
function publicJwk(header: Record<string, unknown>): JWK {
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw invalid('The DPoP proof has no jwk header.');
  if (jwk.kty === 'oct' || ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((m) => m in jwk))
    throw invalid('The jwk of the DPoP proof must be a public key.');
  return jwk;
}

export class DpopVerifier {
  private readonly deps: DpopDeps;
  constructor(deps: DpopDeps) {
    this.deps = deps;
  }

  get requireNonce(): boolean {
    return this.deps.requireNonce;
  }

  /** A nonce every process accepts for this window and the next: the window's number, sealed. */
  nonce(): string {
    return this.deps.sealer.seal(String(Math.floor(this.deps.now() / NONCE_WINDOW_MS)), NONCE_CONTEXT);
  }

  private nonceIsFresh(nonce: string): boolean {
    let window: number;
    try {
      window = Number(this.deps.sealer.open(nonce, NONCE_CONTEXT));
    } catch (err) {
      if (err instanceof SealingError) return false;
      throw err;
    }
    const now = Math.floor(this.deps.now() / NONCE_WINDOW_MS);
    return window === now || window === now - 1;
  }

  /**
   * The request's proof, checked; null when it has no DPoP header. `accessToken`: on a resource
   * request, the token the proof must name (`ath`). Records the proof as used, so it is refused
   * the next time, in any process.
   */
  async verify(req: Request, accessToken?: string): Promise<DpopProof | null> {
    const proof = proofHeader(req);
    if (proof === undefined) return null;
    let header: Record<string, unknown>;
    try {
      header = decodeProtectedHeader(proof) as Record<string, unknown>;
    } catch {
      throw invalid('The DPoP proof is not a JWT.');
    }
    if (header.typ !== 'dpop+jwt') throw invalid('The DPoP proof must have typ dpop+jwt.');
    if (!(DPOP_ALGS as readonly unknown[]).includes(header.alg))
      throw invalid(`The DPoP proof must be signed with one of ${DPOP_ALGS.join(', ')}.`);
    const jwk = publicJwk(header);
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGS] }));
    } catch {
      throw invalid('The DPoP proof signature does not verify with its jwk.');
    }
    const claims = this.checkClaims(req, payload, accessToken);
    const jkt = await calculateJwkThumbprint(jwk, 'sha256');
    const expiresAt = (claims.iat + 2 * IAT_WINDOW_S) * 1000;
    if (!(await recordProofUse(this.deps.db, jkt, claims.jti, expiresAt)))
      throw invalid('This DPoP proof was used before; sign a new one for every request.');
    return { jkt };
  }

  private checkClaims(
    req: Request,
    payload: Record<string, unknown>,
    accessToken: string | undefined,
  ): { jti: string; iat: number } {
    const { jti, htm, htu, iat, ath, nonce } = payload;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_CLAIM_LENGTH)
      throw invalid('The DPoP proof must have a jti.');
    if (htm !== req.method) throw invalid(`The DPoP proof's htm must be ${req.method}.`);
    const url = requestUrl(this.deps.baseUrl, req);
    if (typeof htu !== 'string' || normalizedUrl(htu) !== url) throw invalid(`The DPoP proof's htu must be ${url}.`);
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalid('The DPoP proof must have an iat.');
    if (Math.abs(this.deps.now() / 1000 - iat) > IAT_WINDOW_S)
      throw invalid(`The DPoP proof's iat must be within ${IAT_WINDOW_S} seconds of now.`);
    if (accessToken !== undefined && ath !== accessTokenHash(accessToken))
      throw invalid("The DPoP proof's ath does not match the access token.");
    if (
      nonce !== undefined &&
      (typeof nonce !== 'string' || nonce.length > MAX_CLAIM_LENGTH || !this.nonceIsFresh(nonce))
    )
      throw new DpopError(
        'use_dpop_nonce',
        'The DPoP nonce is stale; sign the proof again with the one in DPoP-Nonce.',
      );
    if (nonce === undefined && this.deps.requireNonce)
      throw new DpopError('use_dpop_nonce', 'Sign the DPoP proof with the nonce in DPoP-Nonce.');
    return { jti, iat };
  }
}

const verifiers = new WeakMap<object, DpopVerifier>();

/** The process's verifier for this context (one per app: its settings, store and sealer). */
export function dpopVerifier(ctx: Pick<AppContext, 'db' | 'sealer' | 'config' | 'now'>): DpopVerifier {
  let verifier = verifiers.get(ctx);
  if (!verifier) {
    verifier = new DpopVerifier({
      db: ctx.db,
      sealer: ctx.sealer,
      baseUrl: ctx.config.BASE_URL,
      requireNonce: ctx.config.DPOP_REQUIRE_NONCE,
      now: () => ctx.now(),
    });
    verifiers.set(ctx, verifier);
  }
  return verifier;
}
