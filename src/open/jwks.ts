import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { publishedJwks } from './signingKeys.ts';

type Jwks = components['schemas']['Jwks'];

/**
 * GET /.well-known/jwks.json: the public keys that verify proxy tokens and OpenID Connect ID
 * tokens, current and previous.
 * Read from the database on each request, so a rotation by any process shows at once; clients
 * cache it, and refetch on an unknown `kid` (jose's createRemoteJWKSet does).
 */
export function getJwks(ctx: AppContext): RequestHandler {
  return async (_req, res) => {
    const body: Jwks = await publishedJwks(ctx);
    res.set('Cache-Control', 'public, max-age=300').json(body);
  };
}
