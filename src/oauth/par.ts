import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { AuthorizePageError, AuthorizeRedirectError, invalidRequest, OAuthError } from '../shared/errors.ts';
import { checkAuthorizeParameters, type AuthorizeRequest } from './authorize.ts';
import { redirectUriAllowed } from './redirectUris.ts';
import { authenticatedClient, findClientByClientId, type OAuthClient } from './clients.ts';
import {
  deleteExpiredPushedRequests,
  findPushedRequestByHash,
  insertPushedRequest,
  markPushedRequestOpened,
  markPushedRequestUsed,
  type PushedRequestRow,
} from './pushedRequests.store.ts';

// Pushed authorization requests (RFC 9126): the client posts the authorization request's
// parameters (2), the browser brings only client_id and the request_uri to /oauth/authorize (4),
// which loads them. A request_uri is bound to its client, used once (a code issued from it, or the
// user's decision) and short-lived: PAR_REQUEST_URI_TTL_SECONDS to reach /oauth/authorize, then
// OPEN_SECONDS for the user to log in and decide (the login page comes back to the same URL).

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** How long the user has, once the browser brought the request_uri, to log in and decide. */
const OPEN_SECONDS = 600;

/** The authorization request's parameters, the only ones stored (others are ignored, as at /oauth/authorize). */
const PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'resource',
] as const;

type Params = Record<string, unknown>;

/** 2.3: an authorization request's error, in the token endpoint's JSON form. */
function pushedRequestError(err: unknown, client: OAuthClient, params: Params): unknown {
  if (err instanceof AuthorizeRedirectError) {
    const known =
      err.error === 'unsupported_response_type' || err.error === 'invalid_scope' || err.error === 'invalid_target';
    return new OAuthError(known ? err.error : 'invalid_request', err.message);
  }
  if (err instanceof AuthorizePageError) {
    // The page errors after the client's are a missing, repeated or unregistered redirect_uri.
    const mismatch = typeof params.redirect_uri === 'string' && !redirectUriAllowed(client, params.redirect_uri);
    return new OAuthError(mismatch ? 'invalid_redirect_uri' : 'invalid_request', err.message);
  }
  return err;
}

/** POST /api/open/oauth/par (RFC 9126 2): validates and stores the request, answers its request_uri. */
export function pushAuthorizationRequest(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const client = await authenticatedClient(ctx, req);
    const body = (req.body ?? {}) as Params;
    // 2.1: a pushed request cannot itself point at another one.
    if (body.request_uri !== undefined)
      throw invalidRequest('request_uri must not be sent to the pushed authorization request endpoint.');
    const params: Params = {};
    for (const name of PARAMETERS) if (body[name] !== undefined) params[name] = body[name];
    params.client_id = client.clientId;
    try {
      checkAuthorizeParameters(client, params, ctx.config.BASE_URL);
    } catch (err) {
      throw pushedRequestError(err, client, params);
    }
    const secret = newToken('par');
    const now = Date.now();
    const ttl = ctx.config.PAR_REQUEST_URI_TTL_SECONDS;
    await deleteExpiredPushedRequests(ctx.db, client.id, now);
    await insertPushedRequest(ctx.db, {
      request_hash: hashToken(secret),
      application_id: client.id,
      params: JSON.stringify(params),
      expires_at: now + ttl * 1000,
      created_at: now,
    });
    res
      .set('Cache-Control', 'no-store')
      .status(201)
      .json({ request_uri: `${REQUEST_URI_PREFIX}${secret}`, expires_in: ttl });
  };
}

/** 4 / 7.3: never a redirect, since nothing about the request can be trusted. */
const unusable = () =>
  new AuthorizePageError(
    'This request_uri is unknown, expired or already used. Go back to the application and start again.',
  );

async function findUsable(ctx: AppContext, params: Params): Promise<PushedRequestRow> {
  const requestUri = params.request_uri;
  const clientId = params.client_id;
  if (typeof clientId !== 'string' || !clientId)
    throw new AuthorizePageError('The request has no client_id, or sent it more than once.');
  if (typeof requestUri !== 'string') throw new AuthorizePageError('request_uri was sent more than once.');
  const client = await findClientByClientId(ctx, clientId);
  if (!client) throw new AuthorizePageError('There is no application with this client_id.');
  const secret = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
  const row = secret ? await findPushedRequestByHash(ctx.db, hashToken(secret)) : undefined;
  // Another client's request_uri is as unknown as a made-up one.
  if (!row || row.application_id !== client.id || row.used_at !== null || row.expires_at <= Date.now())
    throw unusable();
  return row;
}

/**
 * The parameters of the request /oauth/authorize (or its consent decision) was sent: its own, or,
 * with a request_uri, the pushed ones (every other parameter ignored, RFC 9126 4). `open`: the
 * browser's arrival at /oauth/authorize, which starts the user's time to log in and decide; the
 * decision needs a request that was opened.
 */
export async function requestParameters(
  ctx: AppContext,
  params: Params,
  open: boolean,
): Promise<{ params: Params; pushed?: NonNullable<AuthorizeRequest['pushed']> }> {
  if (params.request_uri === undefined) return { params };
  let row = await findUsable(ctx, params);
  if (open && row.opened_at === null) {
    const now = Date.now();
    if (!(await markPushedRequestOpened(ctx.db, row.id, now, now + OPEN_SECONDS * 1000)))
      row = await findUsable(ctx, params);
  }
  if (!open && row.opened_at === null) throw unusable();
  return {
    params: JSON.parse(row.params) as Params,
    pushed: { id: row.id, requestUri: params.request_uri as string, pushedAt: row.created_at },
  };
}

/**
 * RFC 9126 6: a client that must push its requests and did not is refused, the way node-oidc-provider
 * does it: invalid_request to its (registered, checked) redirect_uri.
 */
export function requirePushedIfRegistered(request: AuthorizeRequest): void {
  if (request.client.requirePushedRequests && !request.pushed)
    throw new AuthorizeRedirectError(
      'invalid_request',
      'This application must push its authorization requests (pushed_authorization_request_endpoint) and send the request_uri.',
    );
}

/**
 * A pushed request's prompt=login and max_age are met by a login made after it was pushed: the
 * login page comes back to the same request_uri, whose parameters cannot drop them as a plain
 * request's URL does (interaction.ts loginPage). The ID token's auth_time tells the client when.
 */
export function loggedInSincePushed(request: AuthorizeRequest, authTime: number | undefined): AuthorizeRequest {
  if (!request.pushed || authTime === undefined || authTime < Math.floor(request.pushed.pushedAt / 1000))
    return request;
  const prompt = new Set(request.prompt);
  prompt.delete('login');
  return { ...request, prompt, maxAge: undefined };
}

/** Uses the pushed request up (a code is issued from it, or the user decided): a second use fails. */
export async function usePushedRequest(ctx: AppContext, request: AuthorizeRequest): Promise<void> {
  if (request.pushed && !(await markPushedRequestUsed(ctx.db, request.pushed.id, Date.now()))) throw unusable();
}
