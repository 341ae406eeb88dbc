import { Router } from 'express';
import type { AppContext } from '../context.ts';
import { jwksHandler } from './jwks.ts';
import { getAccessTokenHandler, listAccessTokensHandler } from './tokens.ts';
import { listOrgsHandler, userInfoHandler } from './userinfo.ts';

/** Open interfaces called by third-party apps with an OAuth access token (security: oauth2 in openapi.yaml). */
export function openRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/api/open/v1/userinfo', userInfoHandler(ctx));
  router.get('/api/open/v1/orgs', listOrgsHandler(ctx));
  router.get('/api/open/v1/:namespace/tokens', listAccessTokensHandler(ctx));
  router.get('/api/open/v1/:namespace/tokens/:id', getAccessTokenHandler(ctx));
  router.get('/.well-known/jwks.json', jwksHandler(ctx));
  return router;
}
