import type { RequestHandler } from 'express';
import { apiRateLimited } from '../shared/errors.ts';
import type { Principal } from './principal.ts';
import type { SharedRateLimiter } from './sharedRateLimiter.ts';

/** The allowance a request spends: one OAuth grant's (a grant without an authorization: its user's and client's), or one raw access token's. */
function keyOf(principal: Principal): string {
  if (principal.kind !== 'oauth') return `token:${principal.accessTokenId}`;
  return principal.authorizationId === null
    ? `grant:${principal.userId}:${principal.applicationId}`
    : `grant:${principal.authorizationId}`;
}

/** Per-token limit of the open, serverless and workflow APIs; mounted after the security handlers. */
export function apiRateLimit(limiter: SharedRateLimiter, limitPerMinute: number): RequestHandler {
  return (req, _res, next) => {
    if (!req.principal) return next();
    const retryAfter = limiter.hit(keyOf(req.principal));
    if (retryAfter === null) return next();
    next(apiRateLimited(limitPerMinute, retryAfter));
  };
}
