import type { Request } from 'express';
import { dpopBoundToken, dpopKeyMismatch, resourceDpopError } from '../shared/dpopErrors.ts';
import { DpopError, type DpopVerifier } from './dpop.ts';

/** An OAuth access token as sent: `Authorization: Bearer <token>` (RFC 6750) or `DPoP <token>` (RFC 9449 7.1). */
export interface OAuthCredential {
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

export function oauthCredential(req: Request): OAuthCredential | undefined {
  const header = req.headers.authorization;
  const match = header ? /^(Bearer|DPoP)[ ]+([^ ]+)[ ]*$/i.exec(header) : null;
  if (!match) return undefined;
  return { scheme: match[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: match[2]! };
}

/**
 * Why a resource refuses an access token as it was sent (RFC 9449 7), or null when it may be used:
 * a token bound to a key (`boundJkt`) needs the DPoP scheme and a proof of that key for this
 * request (`ath` naming the token); the DPoP scheme needs a valid proof whatever the token. An
 * unbound token with the DPoP scheme and a valid proof is accepted, as node-oidc-provider does; an
 * unbound token as Bearer is checked as before (a DPoP header beside it is not read). Checked on
 * every request: the principal lease keeps the binding, never the proof.
 */
export async function dpopRefusal(
  verifier: DpopVerifier,
  req: Request,
  credential: OAuthCredential,
  boundJkt: string | undefined,
): Promise<Error | null> {
  if (credential.scheme === 'Bearer') return boundJkt === undefined ? null : dpopBoundToken();
  let jkt: string | undefined;
  try {
    jkt = (await verifier.verify(req, credential.token))?.jkt;
  } catch (err) {
    if (!(err instanceof DpopError)) throw err;
    return resourceDpopError(err.error, err.message, err.error === 'use_dpop_nonce' ? verifier.nonce() : undefined);
  }
  if (jkt === undefined) return resourceDpopError('invalid_dpop_proof', 'Send a DPoP proof with Authorization: DPoP.');
  if (boundJkt !== undefined && jkt !== boundJkt) return dpopKeyMismatch();
  return null;
}
