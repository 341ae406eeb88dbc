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
  | 'interaction_required'
  // RFC 8707 2: a resource parameter this server issues no token for.
  | 'invalid_target';

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
  // RFC 8693 2.2.2: a token exchange's `resource` or `audience` is not one this server issues for.
  | 'invalid_target'
  // The pushed authorization request endpoint's (RFC 9126 2.3): an authorization request's errors.
  | 'unsupported_response_type'
  | 'invalid_redirect_uri'
  // RFC 8628 3.5: the answers to a device code poll.
  | 'authorization_pending'
  | 'access_denied'
  | 'expired_token'
  // RFC 9449 5, 7.1 and 8: a DPoP proof that fails its checks, or lacks the server's nonce.
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // RFC 7591 3.2.2 and RFC 7592 2: client registration's (with invalid_redirect_uri above).
  | 'invalid_client_metadata'
  | 'invalid_token';

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
  new OAuthError(
    'unsupported_grant_type',
    'grant_type must be authorization_code, refresh_token, urn:ietf:params:oauth:grant-type:token-exchange or urn:ietf:params:oauth:grant-type:device_code.',
  );
/** 401 whatever the method, and every 401 carries a challenge (RFC 9110 11.6.1; RFC 6749 5.2): Basic. */
export const invalidClient = () =>
  new OAuthError('invalid_client', 'Client authentication failed.', 401, { 'WWW-Authenticate': 'Basic realm="token"' });
export const twoClientCredentials = () =>
  invalidRequest('Send client credentials in the Authorization header or in the body, not both.');
export const tokenRateLimited = (retryAfter: number) =>
  new OAuthError('slow_down', 'Too many requests; retry later.', 429, { 'Retry-After': String(retryAfter) });
export const oauthUnavailable = () =>
  new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable.', 503, { 'Retry-After': '5' });
export const invalidTarget = (description: string) => new OAuthError('invalid_target', description);

// --- RFC 8628 3.5: a device code poll ------------------------------------------------------------

export const authorizationPending = () =>
  new OAuthError('authorization_pending', 'The user has not yet approved or denied the request.');
/** A poll sooner than the interval: 400, unlike the rate limit's 429 slow_down (RFC 8628 3.5). */
export const pollingTooFast = (intervalS: number) =>
  new OAuthError('slow_down', `Polling too fast; the interval is now ${intervalS} seconds.`);
export const deviceAccessDenied = () => new OAuthError('access_denied', 'The user denied the request.');
export const deviceCodeExpired = () => new OAuthError('expired_token', 'The device code has expired.');

// --- RFC 7591 3.2.2 and RFC 7592: client registration and its management --------------------------

export const invalidClientMetadata = (description: string) => new OAuthError('invalid_client_metadata', description);
export const invalidRedirectUriMetadata = (description: string) => new OAuthError('invalid_redirect_uri', description);
/** The operator has not enabled client registration (CLIENT_REGISTRATION=off). */
export const registrationOff = () =>
  new OAuthError('access_denied', 'Client registration is not enabled on this server.', 403);
/** A missing, unknown or expired initial access token, or a registration access token not the client's. */
export const invalidRegistrationToken = (description: string) =>
  new OAuthError('invalid_token', description, 401, {
    'WWW-Authenticate': 'Bearer realm="register", error="invalid_token"',
  });
