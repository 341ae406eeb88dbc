// DPoP's errors (RFC 9449 5, 7.1, 8, 9): at the token endpoint RFC 6749 5.2 answers, at a resource
// a 401 problem with a DPoP challenge naming the algorithms accepted.
import { OAuthError, Problem } from './errors.ts';

/** The algorithms a DPoP proof may be signed with, as node-oidc-provider's dPoP feature accepts by default. */
export const DPOP_ALGS = ['ES256', 'EdDSA', 'RS256', 'PS256'] as const;
const ALGS = DPOP_ALGS.join(' ');

const quoted = (s: string) => s.replace(/"/g, "'");

/** The token endpoint's: 400 `invalid_dpop_proof`, or `use_dpop_nonce` with a fresh nonce (RFC 9449 8). */
export const tokenEndpointDpopError = (
  error: 'invalid_dpop_proof' | 'use_dpop_nonce',
  detail: string,
  nonce?: string,
) => new OAuthError(error, detail, 400, nonce === undefined ? {} : { 'DPoP-Nonce': nonce });

/** A resource's: 401 with `WWW-Authenticate: DPoP error=...` (RFC 9449 7.1, 9), and a fresh nonce when one is needed. */
export const resourceDpopError = (error: 'invalid_dpop_proof' | 'use_dpop_nonce', detail: string, nonce?: string) =>
  new Problem(error, detail, {
    headers: {
      'WWW-Authenticate': `DPoP error="${error}", error_description="${quoted(detail)}", algs="${ALGS}"`,
      ...(nonce === undefined ? {} : { 'DPoP-Nonce': nonce }),
    },
  });

/** A DPoP-bound access token sent without its proof (as Bearer, or with no DPoP header): RFC 9449 7.1 `invalid_token`. */
export const dpopBoundToken = () => {
  const detail = 'This access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof.';
  return new Problem('invalid_access_token', detail, {
    headers: {
      'WWW-Authenticate': `DPoP error="invalid_token", error_description="${quoted(detail)}", algs="${ALGS}"`,
    },
  });
};

/** A proof whose key is not the one the access token is bound to. */
export const dpopKeyMismatch = () => {
  const detail = 'The DPoP proof is signed by another key than the one this access token is bound to.';
  return new Problem('invalid_access_token', detail, {
    headers: {
      'WWW-Authenticate': `DPoP error="invalid_token", error_description="${quoted(detail)}", algs="${ALGS}"`,
    },
  });
};
