import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { listAuthorizedApps, revokeApplication } from '../../oauth/authorizations.ts';
import { authorizationsPage } from '../views/authorizations.ts';
import { confirmPage } from '../views/confirm.ts';
import { doneMessage, notFoundPage, pageUser, sendPage } from './common.ts';

// /settings/authorizations: the applications the user authorized, and revoking them.

export function authorizationsRouter(ctx: AppContext): Router {
  const router = Router();

  router.get('/settings/authorizations', async (req, res) => {
    const user = await pageUser(ctx, req);
    sendPage(
      res,
      200,
      authorizationsPage({ user, apps: await listAuthorizedApps(ctx, user.id), flash: doneMessage(req) }),
    );
  });

  router.get('/settings/authorizations/:applicationId/revoke', async (req, res) => {
    const user = await pageUser(ctx, req);
    const app = (await listAuthorizedApps(ctx, user.id)).find(
      (a) => a.applicationId === Number(req.params.applicationId),
    );
    if (!app) return sendPage(res, 404, notFoundPage(user, 'authorized application'));
    sendPage(
      res,
      200,
      confirmPage({
        user,
        current: '/settings/authorizations',
        title: `Revoke ${app.name}?`,
        consequence: `${app.name} loses access to your account at once: its access, refresh and proxy tokens stop working, and it must ask you again.`,
        action: `/settings/authorizations/${app.applicationId}/revoke`,
        button: 'Revoke access',
        cancel: '/settings/authorizations',
      }),
    );
  });

  router.post('/settings/authorizations/:applicationId/revoke', async (req, res) => {
    const user = await pageUser(ctx, req);
    const id = Number(req.params.applicationId);
    if (Number.isSafeInteger(id)) await revokeApplication(ctx, user.id, id);
    res.redirect(303, '/settings/authorizations?done=app-revoked');
  });

  return router;
}
