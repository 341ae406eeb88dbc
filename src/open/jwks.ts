import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { JWKS_MAX_AGE_SECONDS, publishedJwks } from './signingKeys.ts';

type Jwks = components['schemas']['Jwks'];

/**
 * GET /.well-known/jwks.json: the public keys that verify proxy tokens and OpenID Connect ID
 * tokens, current, next (a rotation publishes a key ahead of its use) and previous.
 * Read from the database on each request, so a rotation by any process shows at once; clients
 * cache it, and refetch on an unknown `kid` (jose's createRemoteJWKSet does).
 */
export function getJwks(ctx: AppContext): RequestHandler {
  return async (_req, res) => {
    const body: Jwks = await publishedJwks(ctx);
    res.set('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`).json(body);
  };
}
