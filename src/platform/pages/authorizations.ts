import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { listAuthorizedApps, revokeApplication } from '../../oauth/authorizations.ts';
import { authorizationsPage } from '../views/authorizations.ts';
import { pageUser, sendPage } from './common.ts';

// /settings/authorizations: the applications the user authorized, and revoking them.

export function authorizationsRouter(ctx: AppContext): Router {
  const router = Router();

  router.get('/settings/authorizations', async (req, res) => {
    const user = await pageUser(ctx, req);
    sendPage(res, 200, authorizationsPage({ user, apps: await listAuthorizedApps(ctx.db, user.id) }));
  });

  router.post('/settings/authorizations/:applicationId/revoke', async (req, res) => {
    const user = await pageUser(ctx, req);
    const id = Number(req.params.applicationId);
    if (Number.isSafeInteger(id)) await revokeApplication(ctx.db, user.id, id);
    res.redirect(303, '/settings/authorizations');
  });

  return router;
}
