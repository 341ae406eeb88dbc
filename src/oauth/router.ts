import { Router, type Request, type RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { databaseRateLimitStore, retryAfterSeconds } from '../http/rateLimitStore.ts';
import type { AppContext } from '../context.ts';
import { htmlPages, oauthJson, type ErrorSurface } from '../http/errorDialects.ts';
import type { Operations } from '../http/operations.ts';
import type { SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { AuthorizePageError, AuthorizeRedirectError, OAuthError, tokenRateLimited } from '../shared/errors.ts';
import { errorPage } from '../html/errorPage.ts';
import { authTimeOf, csrfToken, sessionMiddleware } from '../accounts/session.ts';
import { redirectWith, validateAuthorizeRequest, type AuthorizeRequest } from './authorize.ts';
import { authorizeErrorPage, consentPage } from './consent.ts';
import { basicCredentials } from './clientAuth.ts';
import { decisionHandler, issueCode } from './decision.ts';
import { consentNeeded, loginPage, mustLogIn } from './interaction.ts';
import { splitScope } from './scopes.ts';
import { findStandingGrant } from './authorizations.store.ts';
import { getAuthorizationServerMetadata, getOpenIdConfiguration, getProtectedResourceMetadata } from './metadata.ts';
import { revokeToken } from './revoke.ts';
import { introspectToken } from './introspect.ts';
import {
  loggedInSincePushed,
  pushAuthorizationRequest,
  requestParameters,
  requirePushedIfRegistered,
  usePushedRequest,
} from './par.ts';
import { token } from './token.ts';
import { startDeviceAuthorization } from './device.ts';
import {
  deleteClientRegistration,
  readClientRegistration,
  registerClient,
  registrationJson,
  updateClientRegistration,
} from './registration.ts';
import { findUserById } from '../accounts/users.ts';

/**
 * The authorization endpoint is a page, not part of the API contract: it must answer some invalid
 * requests with a page and others with a redirect, in the order RFC 6749 4.1.2.1 sets
 * (authorize.ts), so the contract validator leaves it alone and its errors are pages.
 */
export const oauthPagePaths = /^\/oauth\/authorize(\/|$)/;

export const oauthErrors: ErrorSurface[] = [
  { paths: /^\/api\/open\/oauth\/(token|revoke|introspect|par|device_authorization)$/, dialect: oauthJson },
  { paths: oauthPagePaths, dialect: htmlPages(errorPage) },
  { paths: /^\/api\/open\/oauth\/register(\/[^/]+)?$/, dialect: registrationJson },
];

/**
 * Client registrations per source address and hour (CLIENT_REGISTRATION_PER_HOUR), counted in the
 * database as signups are: a registration is no hot path, and each one stores a client.
 */
function registrationsPerAddress(ctx: AppContext): RequestHandler {
  const windowMs = 60 * 60_000;
  return rateLimit({
    windowMs,
    limit: ctx.config.CLIENT_REGISTRATION_PER_HOUR,
    standardHeaders: false,
    legacyHeaders: false,
    skip: () => ctx.config.CLIENT_REGISTRATION === 'off',
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
    store: databaseRateLimitStore(ctx.db, 'register-ip:'),
    handler: (req, _res, next) => next(tokenRateLimited(retryAfterSeconds(req, windowMs))),
  });
}

/**
 * GET /oauth/authorize (RFC 6749 4.1.1): the login page first when needed, then the consent page
 * or, for a remembered grant, the code (interaction.ts decides, OpenID Connect Core 3.1.2.3-4).
 */
function authorize(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    const partial: Partial<AuthorizeRequest> = {};
    try {
      const { params, pushed } = await requestParameters(ctx, req.query as Record<string, unknown>, true);
      const validated = { ...(await validateAuthorizeRequest(ctx, params, partial)), pushed };
      requirePushedIfRegistered(validated);
      const user = req.webSession?.uid ? await findUserById(ctx, req.webSession.uid) : null;
      const request = loggedInSincePushed(validated, user ? authTimeOf(req.webSession!) : undefined);
      if (mustLogIn(request, req.webSession, user !== null)) {
        res.redirect(302, loginPage(req.originalUrl, user !== null));
        return;
      }
      // A remembered grant (as GitHub and Auth0): the same app asking for scopes the user already
      // granted, and not since revoked, goes straight back with a code, after every check above.
      // `prompt=consent` (OpenID Connect Core 3.1.2.1) asks again all the same.
      const grant = request.prompt.has('consent') ? null : await findStandingGrant(ctx.db, user!.id, request.client.id);
      if (grant && splitScope(request.scope).every((s) => grant.scopes.has(s))) {
        await usePushedRequest(ctx, request);
        res.redirect(302, await issueCode(ctx, request, user!.id, grant.authorizationId, authTimeOf(req.webSession!)));
        return;
      }
      consentNeeded(request);
      const ownerId = request.client.ownerUserId;
      const owner = ownerId === null ? undefined : await findUserById(ctx, ownerId);
      res
        .set('Cache-Control', 'no-store')
        .type('html')
        .send(String(consentPage(request, user!, await csrfToken(ctx, req), owner?.login)));
    } catch (err) {
      if (err instanceof AuthorizePageError) {
        res
          .status(400)
          .type('html')
          .send(String(authorizeErrorPage(err.message)));
      } else if (err instanceof AuthorizeRedirectError) {
        res.redirect(
          302,
          redirectWith(partial.redirectUri!, {
            error: err.error,
            error_description: err.message,
            state: partial.state,
            iss: ctx.config.BASE_URL,
          }),
        );
      } else {
        next(err);
      }
    }
  };
}

/** The consent decision: a form post of the consent page, not part of the API contract. */
export function oauthPagesRouter(ctx: AppContext): Router {
  const router = Router();
  router.post('/oauth/authorize/decision', sessionMiddleware(ctx), decisionHandler(ctx));
  return router;
}

/**
 * The rate-limit key: the client id the request claims (HTTP Basic or the form body) AND the
 * source address. The claim is counted before the secret is checked, so a key of the client id
 * alone let anyone spend a client's allowance with its public id and lock it out (RFC 6749 10.10
 * asks to slow guessing, not to hand out lockouts); with the address in the key, requests from
 * elsewhere never touch the real client's count.
 */
const addressKey = (req: Request) => `ip:${ipKeyGenerator(req.ip ?? '')}`;

function clientKey(req: Request): string {
  const address = addressKey(req);
  const basic = basicCredentials(req);
  if (basic) return `client:${basic.clientId}|${address}`;
  const clientId = (req.body as Record<string, unknown> | undefined)?.client_id;
  return typeof clientId === 'string' ? `client:${clientId}|${address}` : address;
}

/**
 * Failed client authentications (invalid_client) per source address, whatever client id they
 * named: the per-client key above gives each made-up client id a fresh allowance, so rotating ids
 * would evade it. An address past its limit is refused before any secret is checked (slowing
 * guessing, RFC 6749 10.10); other addresses, the real client's included, are untouched.
 */
function limitFailedAuthentications(failures: SharedRateLimiter, handler: RequestHandler): RequestHandler[] {
  const refuse: RequestHandler = (req, _res, next) => {
    const retryAfter = failures.check(addressKey(req));
    if (retryAfter === null) return next();
    next(tokenRateLimited(retryAfter));
  };
  const countFailure: RequestHandler = async (req, res, next) => {
    try {
      await handler(req, res, next);
    } catch (err) {
      if (err instanceof OAuthError && err.error === 'invalid_client') failures.hit(addressKey(req));
      throw err;
    }
  };
  return [refuse, countFailure];
}

/** The operations of openapi.yaml this domain serves. */
export function oauthOperations(ctx: AppContext, limiter: SharedRateLimiter, failures: SharedRateLimiter): Operations {
  // Shared by every API process, without a database write per token request (sharedRateLimiter.ts).
  const perClient: RequestHandler = (req, _res, next) => {
    const retryAfter = limiter.hit(clientKey(req));
    if (retryAfter === null) return next();
    next(tokenRateLimited(retryAfter));
  };
  return {
    authorize: [sessionMiddleware(ctx), authorize(ctx)],
    exchangeToken: [perClient, ...limitFailedAuthentications(failures, token(ctx))],
    revokeToken: [perClient, ...limitFailedAuthentications(failures, revokeToken(ctx))],
    introspectToken: [perClient, ...limitFailedAuthentications(failures, introspectToken(ctx))],
    pushAuthorizationRequest: [perClient, ...limitFailedAuthentications(failures, pushAuthorizationRequest(ctx))],
    startDeviceAuthorization: [perClient, ...limitFailedAuthentications(failures, startDeviceAuthorization(ctx))],
    registerClient: [registrationsPerAddress(ctx), registerClient(ctx)],
    readClientRegistration: readClientRegistration(ctx),
    updateClientRegistration: updateClientRegistration(ctx),
    deleteClientRegistration: deleteClientRegistration(ctx),
    getAuthorizationServerMetadata: getAuthorizationServerMetadata(ctx),
    getOpenIdConfiguration: getOpenIdConfiguration(ctx),
    getOpenApiResourceMetadata: getProtectedResourceMetadata(ctx, '/api/open'),
    getWorkflowsResourceMetadata: getProtectedResourceMetadata(ctx, '/api/workflows'),
    getMcpResourceMetadata: getProtectedResourceMetadata(ctx, '/mcp'),
  };
}
