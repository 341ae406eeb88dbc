import OAuth2Server from '@node-oauth/oauth2-server';
import type { Request, RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { invalidClient, OAuthError, twoClientCredentials, type OAuthErrorCode } from '../shared/errors.ts';
import { tokenEndpointDpopError } from '../shared/dpopErrors.ts';
import { DpopError, dpopVerifier, type DpopProof } from '../http/dpop.ts';
import { countTokenGrant } from '../ops/metrics.ts';
import { clientCredentials, type ClientCredentials } from './clientAuth.ts';
import type { TokenForm } from './grants/form.ts';
import {
  clientAuthenticationByGrant,
  extendedGrantTypes,
  GRANT_TYPES,
  grantMetricsLabel,
  grantOf,
} from './grants/registry.ts';
import { TokenModel } from './model.ts';

// POST /api/open/oauth/token (RFC 6749 3.2), served by @node-oauth/oauth2-server's
// OAuth2Server#token: it checks the request, authenticates the client through the model
// (model.ts, one per request) and runs the grant type's class (grants/*.ts, each reading top to
// bottom like its RFC section). In front of it, our decoding of the client's credentials.

export function token(ctx: AppContext): RequestHandler {
  const options: OAuth2Server.TokenOptions = {
    accessTokenLifetime: ctx.config.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenLifetime: ctx.config.REFRESH_TOKEN_TTL_SECONDS,
    // The model's saveToken answers expires_in: the configured lifetime (RFC 6749 5.1).
    allowExtendedTokenAttributes: true,
    alwaysIssueNewRefreshToken: true,
    extendedGrantTypes: extendedGrantTypes(),
    // A public client authenticates with its client_id alone; the model refuses a confidential one without its secret.
    requireClientAuthentication: clientAuthenticationByGrant(),
  };
  return async (req, res) => {
    const form = req.body as TokenForm;
    let body: unknown;
    try {
      const credentials = clientCredentials(req);
      // RFC 6749 2.3: a client must not use more than one authentication method per request (the
      // library would silently prefer Basic).
      if (credentials.secondMethod) throw twoClientCredentials();
      const proof = await tokenRequestProof(ctx, req);
      // The library's typings ask every model for every handler's methods; its token handler calls these.
      const model = new TokenModel(
        ctx,
        form,
        GRANT_TYPES,
        grantOf(form.grant_type),
        proof?.jkt,
      ) as unknown as OAuth2Server.ServerOptions['model'];
      // A nonce for the next proof while nonces are required (RFC 9449 8).
      if (proof && ctx.config.DPOP_REQUIRE_NONCE) res.set('DPoP-Nonce', dpopVerifier(ctx).nonce());
      const response = new OAuth2Server.Response();
      await new OAuth2Server({ ...options, model })
        .token(libraryRequest(req, credentials), response)
        .catch((err: unknown) => {
          throw fromLibrary(err);
        });
      body = response.body;
    } catch (err) {
      countTokenGrant(grantMetricsLabel(form.grant_type), err instanceof OAuthError ? err.error : 'server_error');
      throw err;
    }
    countTokenGrant(grantMetricsLabel(form.grant_type), 'granted');
    // RFC 6749 5.1: the response must not be cached.
    res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache').status(200).json(body);
  };
}

/**
 * The request's DPoP proof, checked (RFC 9449 5): its key binds every access token the grant
 * issues, through the model's saveToken, whatever the grant. Null without a DPoP header.
 */
async function tokenRequestProof(ctx: AppContext, req: Request): Promise<DpopProof | null> {
  const verifier = dpopVerifier(ctx);
  try {
    return await verifier.verify(req);
  } catch (err) {
    if (!(err instanceof DpopError)) throw err;
    throw tokenEndpointDpopError(err.error, err.message, err.error === 'use_dpop_nonce' ? verifier.nonce() : undefined);
  }
}

/**
 * The request as the library reads it, with the client's credentials as we decoded them (RFC 6749
 * 2.3.1) in the form body, where the library takes them from when there is no Authorization header.
 */
function libraryRequest(req: Request, credentials: ClientCredentials): OAuth2Server.Request {
  const { authorization: _decodedAbove, ...headers } = req.headers;
  return new OAuth2Server.Request({
    method: req.method,
    headers: headers as Record<string, string>,
    query: {},
    body: { ...(req.body as TokenForm), client_id: credentials.clientId, client_secret: credentials.clientSecret },
  });
}

const LIBRARY_CODES = new Set<string>([
  'invalid_request',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/** The library's errors as our catalogue's (one renderer: src/http/errorHandler.ts). */
function fromLibrary(err: unknown): unknown {
  if (!(err instanceof OAuth2Server.OAuthError)) return err;
  // What the model and the grant classes throw (our errors, a store failure) comes back wrapped.
  const inner = (err as { inner?: unknown }).inner;
  if (err instanceof OAuth2Server.ServerError && inner !== undefined) return inner;
  if (err.name === 'invalid_client') return invalidClient();
  if (LIBRARY_CODES.has(err.name)) return new OAuthError(err.name as OAuthErrorCode, err.message);
  return err;
}
