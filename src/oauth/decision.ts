import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { csrfValid } from '../platform/session.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { AuthorizePageError, AuthorizeRedirectError, redirectWith, validateAuthorizeRequest, type AuthorizeRequest } from './authorize.ts';
import { authorizeErrorPage } from './consent.ts';
import { insertAuthorization, insertCode } from './store.ts';

/** A code for the validated request under the user's grant; answers the redirect to the client that carries it. */
export async function issueCode(ctx: AppContext, request: AuthorizeRequest, userId: number, authorizationId: number): Promise<string> {
  const now = Date.now();
  const code = newToken('oac');
  await insertCode(ctx.db, {
    codeHash: hashToken(code),
    authorizationId,
    applicationId: request.client.id,
    userId,
    redirectUri: request.redirectUri,
    scope: request.scope,
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: request.codeChallengeMethod,
    expiresAt: now + ctx.config.AUTH_CODE_TTL_SECONDS * 1000,
    createdAt: now,
  });
  return redirectWith(request.redirectUri, { code, state: request.state, iss: ctx.config.BASE_URL });
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
      const request = await validateAuthorizeRequest(ctx, body, partial);
      if (!req.webSession?.uid) {
        res.status(401).type('html').send(String(authorizeErrorPage('Your session has ended. Log in and start again from the application.')));
        return;
      }
      if (!(await csrfValid(ctx, req))) {
        res.status(403).type('html').send(String(authorizeErrorPage('The form expired or did not come from this site. Go back to the application and try again.')));
        return;
      }
      if (body.decision !== 'allow') {
        throw new AuthorizeRedirectError('access_denied', 'The user denied the request.');
      }
      const userId = req.webSession.uid;
      const authorizationId = await insertAuthorization(ctx.db, userId, request.client.id, request.scope, Date.now());
      res.redirect(303, await issueCode(ctx, request, userId, authorizationId));
    } catch (err) {
      if (err instanceof AuthorizePageError) {
        res.status(400).type('html').send(String(authorizeErrorPage(err.message)));
      } else if (err instanceof AuthorizeRedirectError) {
        res.redirect(303, redirectWith(partial.redirectUri!, { error: err.error, error_description: err.message, state: partial.state, iss: ctx.config.BASE_URL }));
      } else {
        next(err);
      }
    }
  };
}
