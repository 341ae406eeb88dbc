import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { principalOf } from '../http/principal.ts';
import { userGone } from '../shared/errors.ts';
import { listOrgsForUser } from '../accounts/orgs.ts';
import { findUserById } from '../accounts/users.ts';

type UserInfo = components['schemas']['UserInfo'];
type Organization = components['schemas']['Organization'];

/**
 * GET /api/open/v1/userinfo: the seed's {id, login, name, avatar_url} (2.3) and `sub`, the id as a
 * string, which OpenID Connect clients require (openid-client's fetchUserInfo refuses a body without it).
 */
export function getUserInfo(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'oauth');
    // The bearer check read the profile with the token (one round trip in all).
    const user = principal.user ?? (await findUserById(ctx, principal.userId));
    if (!user) throw userGone();
    const body: UserInfo = {
      sub: String(user.id),
      id: user.id,
      login: user.login,
      name: user.name,
      avatar_url: user.avatar_url,
    };
    res.set('Cache-Control', 'no-store').json(body);
  };
}

/** GET /api/open/v1/orgs: the user's organizations with their namespaces. */
export function listOrgs(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(req, 'oauth');
    const orgs = await listOrgsForUser(ctx, principal.userId);
    const body: Organization[] = orgs.map((o) => ({
      id: o.id,
      namespace: o.namespace,
      name: o.name,
      avatar_url: o.avatar_url,
    }));
    res.set('Cache-Control', 'no-store').json(body);
  };
}
