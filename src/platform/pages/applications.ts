import { Router, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { Problem } from '../../shared/errors.ts';
import { createApp, getAppOfOwner, deleteApp, listAppsForOwner, rotateSecret, type AppDetails } from '../apps.ts';
import { applicationsPage, clientSecretPage } from '../views/applications.ts';
import { confirmPage } from '../views/confirm.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { doneMessage, field, formProblemsOf, notFoundPage, pageUser, sendPage } from './common.ts';

// /settings/applications: register, rotate the secret of, and delete the user's OAuth applications.

export function applicationsRouter(ctx: AppContext): Router {
  const router = Router();

  async function showApplications(res: Response, status: number, user: PageUser, problems: FormProblem[], input?: Required<AppDetails>, flash?: string): Promise<void> {
    sendPage(res, status, applicationsPage({ user, apps: await listAppsForOwner(ctx.db, user.id), problems, input, flash }));
  }

  router.get('/settings/applications', async (req, res) => {
    await showApplications(res, 200, await pageUser(ctx, req), [], undefined, doneMessage(req));
  });

  router.post('/settings/applications', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input: Required<AppDetails> = { name: field(req, 'name'), description: field(req, 'description'), homepage: field(req, 'homepage'), redirectUri: field(req, 'redirect_uri') };
    try {
      const { app, clientSecret } = await createApp(ctx.db, { ownerUserId: user.id, ...input });
      sendPage(res, 200, clientSecretPage({ user, title: `Registered ${app.name}`, clientId: app.client_id, secret: clientSecret }));
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 400) throw err;
      await showApplications(res, 400, user, formProblemsOf(err), input);
    }
  });

  router.post('/settings/applications/:id/rotate', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      const { app, clientSecret } = await rotateSecret(ctx.db, user.id, Number(req.params.id));
      sendPage(res, 200, clientSecretPage({ user, title: `New secret for ${app.name}`, clientId: app.client_id, secret: clientSecret }));
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });

  router.get('/settings/applications/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      const app = await getAppOfOwner(ctx.db, user.id, Number(req.params.id));
      sendPage(res, 200, confirmPage({
        user,
        current: '/settings/applications',
        title: `Delete ${app.name}?`,
        consequence: `Its client ID ${app.client_id} and secret stop working at once, and every user's tokens for it are revoked. This cannot be undone.`,
        action: `/settings/applications/${app.id}/delete`,
        button: 'Delete this application',
        cancel: '/settings/applications',
      }));
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });

  router.post('/settings/applications/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      await deleteApp(ctx.db, user.id, Number(req.params.id));
      res.redirect(303, '/settings/applications?done=app-deleted');
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });

  return router;
}
