// The OAuth 2.0 endpoints' errors: the authorization endpoint's (a page, or RFC 6749 4.1.2.1 to
// the redirect_uri) and the token and revocation endpoints' (RFC 6749 5.2). Part of the catalogue
// that src/shared/errors.ts exports; src/http/errorDialects.ts renders them.

/** RFC 6749 4.1.2.1, and OpenID Connect Core 3.1.2.6's answers to `prompt=none`. */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required';

/** The client or its redirect_uri is not established: show a page, never redirect (4.1.2.1). */
export class AuthorizePageError extends Error {}

/** An error the client may learn of, sent to its redirect_uri (4.1.2.1). */
export class AuthorizeRedirectError extends Error {
  readonly error: AuthorizeErrorCode;
  constructor(error: AuthorizeErrorCode, description: string) {
    super(description);
    this.error = error;
  }
}

// --- RFC 6749 5.2: the token and revocation endpoints --------------------------------------------

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'slow_down'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(error: OAuthErrorCode, description: string, status = 400, headers: Record<string, string> = {}) {
    super(description);
    this.error = error;
    this.status = status;
    this.headers = headers;
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

export const invalidRequest = (description: string, status = 400, headers: Record<string, string> = {}) =>
  new OAuthError('invalid_request', description, status, headers);
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
export const invalidScope = (description: string) => new OAuthError('invalid_scope', description);
export const unsupportedGrantType = () =>
  new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
/** 401 whatever the method, and every 401 carries a challenge (RFC 9110 11.6.1; RFC 6749 5.2): Basic. */
export const invalidClient = () =>
  new OAuthError('invalid_client', 'Client authentication failed.', 401, { 'WWW-Authenticate': 'Basic realm="token"' });
export const twoClientCredentials = () =>
  invalidRequest('Send client credentials in the Authorization header or in the body, not both.');
export const tokenRateLimited = (retryAfter: number) =>
  new OAuthError('slow_down', 'Too many requests; retry later.', 429, { 'Retry-After': String(retryAfter) });
export const oauthUnavailable = () =>
  new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable.', 503, { 'Retry-After': '5' });
