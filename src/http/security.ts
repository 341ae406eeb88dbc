import type { Request } from 'express';
import type * as OpenApiValidator from 'express-openapi-validator';
import {
  insufficientScope,
  invalidAccessToken,
  invalidApiKey,
  invalidProxyToken,
  missingBearer,
  missingPermission,
  tokenForAnotherResource,
  wrongKindOfToken,
  type Problem,
} from '../shared/errors.ts';
import type { PrincipalOf } from './principal.ts';
import { oauthCredential, type OAuthCredential } from './dpopResource.ts';
import {
  resourceIdentifier,
  resourceMetadataUrl,
  resourceOfPath,
  withResourceMetadata,
  type ProtectedResource,
} from './protectedResources.ts';

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  const match = header ? /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * Records why a request was refused (the first scheme's reason; a 403 or a fault recorded later
 * wins) and tells the validator it was. The validator tries an operation's schemes in the spec's
 * order and stops at the first that passes (our patch), so a successful request builds no refusal.
 */
function refuse(req: Request, reason: Error): false {
  req.authFailure ??= reason;
  return false;
}

/**
 * Refuses with a 403: the validator answers 403 only to a handler that throws an error with that
 * status, and keeps nothing else of it (#604), so the problem is also recorded on the request.
 */
function forbid(req: Request, problem: Problem): never {
  req.authFailure = problem;
  throw problem;
}

/** The validator's security handlers, as its exported middleware() takes them (its own type is not exported from the package root). */
type ValidateSecurity = Exclude<
  Parameters<typeof OpenApiValidator.middleware>[0]['validateSecurity'],
  boolean | undefined
>;
type SecurityHandlers = NonNullable<ValidateSecurity['handlers']>;
type Handler = SecurityHandlers[string];

/**
 * The validator turns anything a security handler throws into a 401 and drops the error. A
 * database outage (or a bug) is not a credential problem: keep the error itself so the error
 * handler answers 503 (or 500), not "bad credentials". Our deliberate refusals carry a `status`.
 */
function keepingFaults(handler: Handler): Handler {
  return async (req, scopes, scheme) => {
    try {
      return await handler(req, scopes, scheme);
    } catch (err) {
      if (typeof (err as { status?: unknown } | null)?.status !== 'number') (req as Request).authFailure = err as Error;
      throw err;
    }
  };
}

/** Whether the matched operation lists the oauth2 scheme among its security alternatives. */
function acceptsOAuth(req: Request): boolean {
  const security = (req as Request & { openapi?: { schema?: { security?: Record<string, unknown>[] } } }).openapi
    ?.schema?.security;
  return security?.some((requirement) => Object.hasOwn(requirement, 'oauth2')) ?? false;
}

/** How each kind of bearer credential is checked; the domains provide them (src/app.ts). */
export interface Authenticators {
  oauthAccessToken(token: string): Promise<PrincipalOf<'oauth'> | null>;
  /** Why the token may not be used as sent (DPoP, RFC 9449 7), or null: checked on every request. */
  dpopRefusal(req: Request, credential: OAuthCredential, boundJkt: string | undefined): Promise<Error | null>;
  /** Whether a token has the shape of this kind; another kind's token is not refused here. */
  looksLikeApiKey(token: string): boolean;
  apiKey(token: string): Promise<PrincipalOf<'apiKey'> | null>;
  looksLikeProxyToken(token: string): boolean;
  proxyToken(token: string): Promise<PrincipalOf<'proxy'> | null>;
}

/** The protected resource a request is for, as the audience check and the 401's challenge need it. */
export interface ResourceOfRequest {
  resource: ProtectedResource;
  baseUrl: string;
}

/**
 * The OAuth principal of a request (RFC 6750, and RFC 9449 7 for a DPoP-bound token), or why it is
 * refused (401): every resource that takes our OAuth access tokens goes this way, the contract's
 * `oauth2` scheme and the MCP endpoint outside the contract alike. The scope is the caller's. With
 * `at`, a token issued for other resources (RFC 8707) is refused, as is one issued for none where
 * the resource requires its own; every refusal's challenge names the resource's metadata (RFC 9728 5.1).
 */
export async function authenticateOAuthRequest(
  req: Request,
  authenticate: Pick<Authenticators, 'oauthAccessToken' | 'dpopRefusal'>,
  at?: ResourceOfRequest,
): Promise<{ principal: PrincipalOf<'oauth'>; credential: OAuthCredential } | { refusal: Error }> {
  const found = await authenticated(req, authenticate, at);
  if ('refusal' in found && at) withResourceMetadata(found.refusal, resourceMetadataUrl(at.baseUrl, at.resource));
  return found;
}

async function authenticated(
  req: Request,
  authenticate: Pick<Authenticators, 'oauthAccessToken' | 'dpopRefusal'>,
  at: ResourceOfRequest | undefined,
): Promise<{ principal: PrincipalOf<'oauth'>; credential: OAuthCredential } | { refusal: Error }> {
  const credential = oauthCredential(req);
  if (!credential) return { refusal: missingBearer() };
  const principal = await authenticate.oauthAccessToken(credential.token);
  if (!principal) return { refusal: invalidAccessToken() };
  const dpop = await authenticate.dpopRefusal(req, credential, principal.dpopJkt);
  if (dpop) return { refusal: dpop };
  if (at && !issuedFor(principal, at)) return { refusal: tokenForAnotherResource() };
  return { principal, credential };
}

/** Whether the token's audience admits this resource: named in it, or none named where the resource allows. */
function issuedFor(principal: PrincipalOf<'oauth'>, at: ResourceOfRequest): boolean {
  if (principal.audience === undefined) return !at.resource.audienceRequired;
  return principal.audience.includes(resourceIdentifier(at.baseUrl, at.resource));
}

/**
 * One handler per security scheme of openapi.yaml. Each authenticates for real and sets
 * `req.principal`; the validator runs them before request validation, so an unauthenticated bad
 * request is a 401, not a 400.
 */
export function securityHandlers(authenticate: Authenticators, baseUrl: string): SecurityHandlers {
  /** The resource of a request whose operation takes OAuth tokens; its refusals name its metadata (RFC 9728 5.1). */
  const oauthResource = (req: Request): ResourceOfRequest | undefined => {
    const resource = acceptsOAuth(req) ? resourceOfPath(req.path) : undefined;
    return resource && { resource, baseUrl };
  };
  const refuseAt = (req: Request, reason: Error): false => {
    const at = oauthResource(req);
    return refuse(req, at ? withResourceMetadata(reason, resourceMetadataUrl(baseUrl, at.resource)) : reason);
  };
  const handlers: SecurityHandlers = {
    async oauth2(req, scopes) {
      const at = oauthResource(req);
      const found = await authenticateOAuthRequest(req, authenticate, at);
      if ('refusal' in found) return refuse(req, found.refusal);
      const { principal } = found;
      const missing = scopes.find((s) => !principal.scopes.includes(s));
      if (missing) {
        const problem = insufficientScope(missing);
        forbid(req, at ? withResourceMetadata(problem, resourceMetadataUrl(baseUrl, at.resource)) : problem);
      }
      req.principal = principal;
      return true;
    },

    // The token endpoint authenticates its client itself (RFC 6749 2.3.1), Basic or form body.
    clientBasic: () => true,
    // Client registration checks its initial and registration access tokens itself (oauth/registration.ts).
    initialAccessToken: () => true,
    registrationAccessToken: () => true,

    async apiKey(req, permissions) {
      const token = bearerToken(req);
      // An OAuth credential where the operation also takes one: the oauth2 handler, tried next,
      // says why it is refused (a revoked token, a missing DPoP proof), not "wrong kind".
      if ((!token || !authenticate.looksLikeApiKey(token)) && oauthCredential(req) && acceptsOAuth(req)) return false;
      const realm = req.path.startsWith('/serverless/') ? 'serverless' : 'api';
      if (!token) return refuseAt(req, missingBearer(realm));
      // Another kind of token is a bad token here, not a missing one, so that a client knows to
      // send another credential.
      if (!authenticate.looksLikeApiKey(token)) return refuseAt(req, wrongKindOfToken(realm));
      const principal = await authenticate.apiKey(token);
      if (!principal) return refuseAt(req, invalidApiKey());
      const missing = permissions.find((p) => !principal.permissions.includes(p));
      if (missing) forbid(req, missingPermission(missing));
      req.principal = principal;
      return true;
    },

    proxyToken: (req) => proxyToken(req),

    // The same proxy tokens with the DPoP scheme (RFC 9449 7.1): a scheme of its own, since the
    // validator refuses any other scheme than Bearer for an http bearer one before its handler runs.
    proxyTokenDpop: (req) => (oauthCredential(req)?.scheme === 'DPoP' ? proxyToken(req) : false),
  };

  /**
   * A proxy token (Bearer, or DPoP with a proof): one bound to a DPoP key (`cnf.jkt`, minted from a
   * bound access token) needs the DPoP scheme and a proof of that key, as an access token does.
   */
  async function proxyToken(req: Request): Promise<boolean> {
    const credential = oauthCredential(req);
    if (!credential) return refuse(req, missingBearer('serverless'));
    if (!authenticate.looksLikeProxyToken(credential.token)) return false;
    const principal = await authenticate.proxyToken(credential.token);
    if (!principal) return refuse(req, invalidProxyToken());
    const dpop = await authenticate.dpopRefusal(req, credential, principal.dpopJkt);
    if (dpop) return refuse(req, dpop);
    req.principal = principal;
    return true;
  }
  return Object.fromEntries(Object.entries(handlers).map(([name, handler]) => [name, keepingFaults(handler)]));
}
