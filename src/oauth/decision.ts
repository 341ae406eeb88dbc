import OAuth2Server from '@node-oauth/oauth2-server';
import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { authTimeOf, csrfValid } from '../accounts/session.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { redirectWith, validateAuthorizeRequest, type AuthorizeRequest } from './authorize.ts';
import { AuthorizePageError, AuthorizeRedirectError } from '../shared/errors.ts';
import { authorizeErrorPage } from './consent.ts';
import { requestParameters, requirePushedIfRegistered, usePushedRequest } from './par.ts';
import { GRANT_TYPES } from './grants/registry.ts';
import { joinScopes } from './scopes.ts';
import { insertAuthorization } from './authorizations.store.ts';
import { insertCode } from './store.ts';

/**
 * A code for the validated request under the user's grant (RFC 6749 4.1.2), issued by
 * @node-oauth/oauth2-server's OAuth2Server#authorize once our steps (authorize.ts), login and consent
 * have run: they are its authenticateHandler, and its model stores the code under the grant.
 * Answers the redirect to the client that carries it, with state and iss (RFC 9207) after the code:
 * the library takes only VSCHAR states, and iss is ours. `authTime`: when the user logged in (epoch
 * seconds), kept with the code with the request's nonce for the ID token (OpenID Connect Core 2).
 */
export async function issueCode(
  ctx: AppContext,
  request: AuthorizeRequest,
  userId: number,
  authorizationId: number,
  authTime: number,
): Promise<string> {
  const query: Record<string, string> = {
    response_type: 'code',
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scope,
  };
  if (request.codeChallenge)
    Object.assign(query, { code_challenge: request.codeChallenge, code_challenge_method: request.codeChallengeMethod });
  const response = new OAuth2Server.Response();
  try {
    await new OAuth2Server({ model: codeModel(ctx, request, authorizationId, authTime) }).authorize(
      new OAuth2Server.Request({ method: 'GET', headers: {}, query }),
      response,
      {
        authenticateHandler: { handle: () => ({ id: userId }) },
        allowEmptyState: true,
        authorizationCodeLifetime: ctx.config.AUTH_CODE_TTL_SECONDS,
      },
    );
  } catch (err) {
    // A store failure comes back wrapped in the library's server_error.
    throw (err instanceof OAuth2Server.ServerError && (err as { inner?: unknown }).inner) || err;
  }
  return redirectWith(String(response.get('location')), { state: request.state, iss: ctx.config.BASE_URL });
}

/** The authorization endpoint's model: the client and scope are the validated request's; the code is stored as a hash. */
function codeModel(
  ctx: AppContext,
  request: AuthorizeRequest,
  authorizationId: number,
  authTime: number,
): OAuth2Server.ServerOptions['model'] {
  const model = {
    getClient: async () => ({
      id: request.client.clientId,
      grants: GRANT_TYPES,
      // The request's redirect_uri, already checked against the client's (authorize.ts).
      redirectUris: [request.redirectUri],
    }),
    validateScope: async (_user: OAuth2Server.User, _client: OAuth2Server.Client, scope?: string[]) => scope,
    generateAuthorizationCode: async () => newToken('oac'),
    async saveAuthorizationCode(
      code: Pick<
        OAuth2Server.AuthorizationCode,
        'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'
      >,
      client: OAuth2Server.Client,
      user: OAuth2Server.User,
    ) {
      await insertCode(ctx.db, {
        codeHash: hashToken(code.authorizationCode),
        authorizationId,
        applicationId: request.client.id,
        userId: user.id as number,
        redirectUri: code.redirectUri,
        scope: joinScopes(code.scope ?? []),
        codeChallenge: code.codeChallenge,
        codeChallengeMethod: code.codeChallengeMethod,
        nonce: request.nonce,
        authTime: authTime * 1000,
        expiresAt: code.expiresAt.getTime(),
        createdAt: Date.now(),
        resources: request.resources,
      });
      return { ...code, client, user };
    },
  };
  // The library's typings ask every model for every handler's methods; its authorize handler calls these.
  return model as unknown as OAuth2Server.ServerOptions['model'];
}

/**
 * POST /oauth/authorize/decision: the consent form. The request it carries is validated again with
 * the same steps as GET /oauth/authorize (the form fields are user-controlled too).
 */
export function decisionHandler(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const partial: Partial<AuthorizeRequest> = {};
    try {
      const { params, pushed } = await requestParameters(ctx, body, false);
      const request = { ...(await validateAuthorizeRequest(ctx, params, partial)), pushed };
      requirePushedIfRegistered(request);
      if (!req.webSession?.uid) {
        res
          .status(401)
          .type('html')
          .send(String(authorizeErrorPage('Your session has ended. Log in and start again from the application.')));
        return;
      }
      if (!(await csrfValid(ctx, req))) {
        res
          .status(403)
          .type('html')
          .send(
            String(
              authorizeErrorPage(
                'The form expired or did not come from this site. Go back to the application and try again.',
              ),
            ),
          );
        return;
      }
      // Either answer uses a pushed request up (RFC 9126 4: one authorization per request_uri).
      await usePushedRequest(ctx, request);
      if (body.decision !== 'allow') {
        throw new AuthorizeRedirectError('access_denied', 'The user denied the request.');
      }
      const userId = req.webSession.uid;
      const authorizationId = await insertAuthorization(ctx.db, userId, request.client.id, request.scope, Date.now());
      res.redirect(303, await issueCode(ctx, request, userId, authorizationId, authTimeOf(req.webSession)));
    } catch (err) {
      if (err instanceof AuthorizePageError) {
        res
          .status(400)
          .type('html')
          .send(String(authorizeErrorPage(err.message)));
      } else if (err instanceof AuthorizeRedirectError) {
        res.redirect(
          303,
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
