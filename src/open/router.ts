import type { AppContext } from '../context.ts';
import type { Operations } from '../http/operations.ts';
import { getJwks } from './jwks.ts';
import { getAccessToken, listAccessTokens } from './tokens.ts';
import { getUserInfo, listOrgs } from './userinfo.ts';

/** Open interfaces called by third-party apps with an OAuth access token (security: oauth2 in openapi.yaml). */
export function openOperations(ctx: AppContext): Operations {
  return {
    getUserInfo: getUserInfo(ctx),
    listOrgs: listOrgs(ctx),
    listAccessTokens: listAccessTokens(ctx),
    getAccessToken: getAccessToken(ctx),
    getJwks: getJwks(ctx),
  };
}
