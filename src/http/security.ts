import type { Request } from 'express';
import type { SecurityHandlers } from 'express-openapi-validator/dist/framework/types.js';
import type { AppContext } from '../context.ts';
import { authenticateOAuthAccessToken } from '../oauth/accessTokenAuth.ts';
import { authenticateProxyToken, looksLikeJwt } from '../open/proxyTokenAuth.ts';
import { authenticateApiKey, looksLikeApiKey } from '../platform/apiKeyAuth.ts';
import { insufficientScope, invalidBearer, missingBearer, Problem } from './problems.ts';

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  const match = header ? /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header) : null;
  return match?.[1];
}

/** Records why a request was refused and tells the validator it was. */
function refuse(req: Request, reason: Error): false {
  req.authFailure ??= reason;
  return false;
}

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

/**
 * One handler per security scheme of openapi.yaml. Each authenticates for real and sets
 * `req.principal`; the validator runs them before request validation, so an unauthenticated bad
 * request is a 401, not a 400.
 */
export function securityHandlers(ctx: AppContext): SecurityHandlers {
  const handlers: SecurityHandlers = {
    async oauth2(req, scopes) {
      const token = bearerToken(req);
      if (!token) return refuse(req, missingBearer());
      const principal = await authenticateOAuthAccessToken(ctx, token);
      if (!principal) return refuse(req, invalidBearer('The access token is invalid, expired or revoked.'));
      const missing = scopes.find((s) => !principal.scopes.includes(s));
      if (missing) {
        req.authFailure = insufficientScope(missing);
        throw Object.assign(new Error('insufficient scope'), { status: 403 });
      }
      req.principal = principal;
      return true;
    },

    // The token endpoint authenticates its client itself (RFC 6749 2.3.1), Basic or form body.
    clientBasic: () => true,

    async apiKey(req, permissions) {
      const token = bearerToken(req);
      if (!token) return refuse(req, missingBearer());
      if (!looksLikeApiKey(token)) return false;
      const principal = await authenticateApiKey(ctx, token);
      if (!principal) return refuse(req, invalidBearer('The API key is invalid or was deleted.'));
      const missing = permissions.find((p) => !principal.permissions.includes(p));
      if (missing) {
        req.authFailure = new Problem(403, `This API key does not have the ${missing} permission.`);
        throw Object.assign(new Error('missing permission'), { status: 403 });
      }
      req.principal = principal;
      return true;
    },

    async proxyToken(req) {
      const token = bearerToken(req);
      if (!token) return refuse(req, missingBearer('serverless'));
      if (!looksLikeJwt(token)) return false;
      const principal = await authenticateProxyToken(ctx, token);
      if (!principal) {
        return refuse(req, invalidBearer('The proxy token is invalid, expired, or its authorization was revoked.', 'serverless'));
      }
      req.principal = principal;
      return true;
    },
  };
  return Object.fromEntries(Object.entries(handlers).map(([name, handler]) => [name, keepingFaults(handler)]));
}
