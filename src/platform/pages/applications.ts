import { Router, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { Problem } from '../../shared/errors.ts';
import { createApp, deleteApp, listAppsForOwner, rotateSecret, type AppDetails } from '../apps.ts';
import { applicationsPage, clientSecretPage } from '../views/applications.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { field, formProblemsOf, notFoundPage, pageUser, sendPage } from './common.ts';

// /settings/applications: register, rotate the secret of, and delete the user's OAuth applications.

export function applicationsRouter(ctx: AppContext): Router {
  const router = Router();

  async function showApplications(res: Response, status: number, user: PageUser, problems: FormProblem[], input?: Required<AppDetails>): Promise<void> {
    sendPage(res, status, applicationsPage({ user, apps: await listAppsForOwner(ctx.db, user.id), problems, input }));
  }

  router.get('/settings/applications', async (req, res) => {
    await showApplications(res, 200, await pageUser(ctx, req), []);
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

  router.post('/settings/applications/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      await deleteApp(ctx.db, user.id, Number(req.params.id));
      res.redirect(303, '/settings/applications');
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });

  return router;
}
