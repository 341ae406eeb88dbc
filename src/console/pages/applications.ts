import { randomBytes } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import {
  addClientSecret,
  clientSecretsOf,
  createApp,
  createAppOnce,
  deleteApp,
  deleteClientSecret,
  getAppOfOwner,
  listAppsForOwner,
  setRequirePushedAuthorizationRequests,
  updateApp,
  type AppDetails,
} from '../../accounts/apps.ts';
import { applicationPage, applicationsPage, clientSecretPage } from '../views/applications.ts';
import { confirmPage } from '../views/confirm.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { doneMessage, field, formProblemsOf, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// /settings/applications: register, edit, manage the client secrets of, and delete the user's
// OAuth applications.

/** A fresh one-time nonce for a registration form. */
const newNonce = () => randomBytes(24).toString('base64url');
const NONCE = /^[A-Za-z0-9_-]{32}$/;

const detailsOf = (req: Request): Required<AppDetails> => ({
  name: field(req, 'name'),
  description: field(req, 'description'),
  homepage: field(req, 'homepage'),
  redirectUri: field(req, 'redirect_uri'),
  idTokenAlg: field(req, 'id_token_signed_response_alg'),
});

/** The details to change: a form without the ID token algorithm (a script's) keeps the app's. */
const asSent = ({ idTokenAlg, ...rest }: Required<AppDetails>): AppDetails =>
  idTokenAlg ? { ...rest, idTokenAlg } : rest;

async function showApplications(
  ctx: AppContext,
  res: Response,
  status: number,
  user: PageUser,
  problems: FormProblem[],
  input?: Required<AppDetails>,
  flash?: string,
): Promise<void> {
  sendPage(
    res,
    status,
    applicationsPage({ user, apps: await listAppsForOwner(ctx, user.id), problems, input, nonce: newNonce(), flash }),
  );
}

async function showApplication(
  ctx: AppContext,
  res: Response,
  status: number,
  user: PageUser,
  appId: number,
  problems: FormProblem[] = [],
  input?: Required<AppDetails>,
  flash?: string,
): Promise<void> {
  try {
    const app = await getAppOfOwner(ctx, user.id, appId);
    sendPage(
      res,
      status,
      applicationPage({ user, app, secrets: await clientSecretsOf(ctx, app), problems, input, flash }),
    );
  } catch (err) {
    refusedWith(err, 404);
    sendPage(res, 404, notFoundPage(user, 'application'));
  }
}

export function applicationsRouter(ctx: AppContext): Router {
  const router = Router();
  registrationRoutes(router, ctx);
  secretRoutes(router, ctx);
  pushedRequestRoutes(router, ctx);
  deletionRoutes(router, ctx);
  return router;
}

/** Registering an application and editing its details. */
function registrationRoutes(router: Router, ctx: AppContext): void {
  router.get('/settings/applications', async (req, res) => {
    await showApplications(ctx, res, 200, await pageUser(ctx, req), [], undefined, doneMessage(req));
  });

  router.post('/settings/applications', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input = detailsOf(req);
    const nonce = field(req, 'form_nonce');
    try {
      // A form without a nonce (a script posting it) registers as asked, every time.
      // A form without the ID token algorithm (a script's) registers the default.
      const details = { ownerUserId: user.id, ...input, idTokenAlg: input.idTokenAlg || undefined };
      const created = NONCE.test(nonce) ? await createAppOnce(ctx, details, nonce) : await createApp(ctx, details);
      if (created.clientSecret === null) {
        // The same form again (back button, double click): the app it registered, not a second one.
        res.redirect(303, `/settings/applications/${created.app.id}?done=app-already-registered`);
        return;
      }
      sendPage(
        res,
        200,
        clientSecretPage({
          user,
          title: `Registered ${created.app.name}`,
          appId: created.app.id,
          clientId: created.app.client_id,
          secret: created.clientSecret,
        }),
      );
    } catch (err) {
      await showApplications(ctx, res, 400, user, formProblemsOf(refusedWith(err, 400)), input);
    }
  });

  router.get('/settings/applications/:id', async (req, res) => {
    await showApplication(
      ctx,
      res,
      200,
      await pageUser(ctx, req),
      Number(req.params.id),
      [],
      undefined,
      doneMessage(req),
    );
  });

  router.post('/settings/applications/:id', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input = detailsOf(req);
    try {
      const app = await updateApp(ctx, user.id, Number(req.params.id), asSent(input));
      res.redirect(303, `/settings/applications/${app.id}?done=app-updated`);
    } catch (err) {
      const problem = refusedWith(err, 400, 404);
      if (problem.status === 404) return sendPage(res, 404, notFoundPage(user, 'application'));
      await showApplication(ctx, res, 400, user, Number(req.params.id), formProblemsOf(problem), input);
    }
  });
}

/** Whether the app must push its authorization requests (RFC 9126 6): a checkbox of its own form. */
function pushedRequestRoutes(router: Router, ctx: AppContext): void {
  router.post('/settings/applications/:id/pushed-requests', async (req, res) => {
    const user = await pageUser(ctx, req);
    const required = field(req, 'require_pushed_authorization_requests') === 'true';
    try {
      await setRequirePushedAuthorizationRequests(ctx, user.id, Number(req.params.id), required);
      res.redirect(303, `/settings/applications/${Number(req.params.id)}?done=app-updated`);
    } catch (err) {
      refusedWith(err, 404);
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });
}

/** Adding and deleting client secrets (rotation). */
function secretRoutes(router: Router, ctx: AppContext): void {
  router.post('/settings/applications/:id/secrets', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      const { app, clientSecret, secretCount } = await addClientSecret(ctx, user.id, Number(req.params.id));
      const others = secretCount - 1;
      sendPage(
        res,
        200,
        clientSecretPage({
          user,
          title: `New client secret for ${app.name}`,
          appId: app.id,
          clientId: app.client_id,
          secret: clientSecret,
          note: others
            ? 'The previous secret keeps working until you delete it: deploy this one, then delete the old one.'
            : undefined,
        }),
      );
    } catch (err) {
      const problem = refusedWith(err, 404, 409);
      if (problem.status === 404) return sendPage(res, 404, notFoundPage(user, 'application'));
      await showApplication(ctx, res, 409, user, Number(req.params.id), [{ message: problem.message }]);
    }
  });

  router.get('/settings/applications/:id/secrets/:secretId/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      const app = await getAppOfOwner(ctx, user.id, Number(req.params.id));
      const secrets = await clientSecretsOf(ctx, app);
      const index = secrets.findIndex((s) => s.id === Number(req.params.secretId));
      if (index < 0) return sendPage(res, 404, notFoundPage(user, 'client secret'));
      const last = secrets.length === 1;
      sendPage(
        res,
        200,
        confirmPage({
          user,
          current: '/settings/applications',
          title: `Delete client secret ${index + 1} of ${app.name}?`,
          consequence: last
            ? `This is the only client secret of ${app.name}. Without it the app cannot obtain or refresh tokens until you generate a new one; its users' existing access tokens keep working until they expire.`
            : `Deployments of ${app.name} that still use this secret can no longer obtain or refresh tokens. The other secret keeps working.`,
          action: `/settings/applications/${app.id}/secrets/${secrets[index]!.id}/delete`,
          button: last ? 'Delete the last client secret' : 'Delete this client secret',
          cancel: `/settings/applications/${app.id}`,
          hidden: last ? { even_the_last: 'yes' } : undefined,
        }),
      );
    } catch (err) {
      refusedWith(err, 404);
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });

  router.post('/settings/applications/:id/secrets/:secretId/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    const appId = Number(req.params.id);
    try {
      await deleteClientSecret(ctx, user.id, appId, Number(req.params.secretId), {
        evenTheLast: field(req, 'even_the_last') === 'yes',
      });
      res.redirect(303, `/settings/applications/${appId}?done=secret-deleted`);
    } catch (err) {
      const problem = refusedWith(err, 404, 409);
      if (problem.status === 404) return sendPage(res, 404, notFoundPage(user, 'client secret'));
      // The last secret, from a confirm page that did not say so (another secret was deleted since).
      await showApplication(ctx, res, 409, user, appId, [{ message: problem.message }]);
    }
  });
}

/** Deleting an application, after a confirm page. */
function deletionRoutes(router: Router, ctx: AppContext): void {
  router.get('/settings/applications/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      const app = await getAppOfOwner(ctx, user.id, Number(req.params.id));
      sendPage(
        res,
        200,
        confirmPage({
          user,
          current: '/settings/applications',
          title: `Delete ${app.name}?`,
          consequence: `Its client ID ${app.client_id} and secrets stop working at once, and every user's tokens for it are revoked. This cannot be undone.`,
          action: `/settings/applications/${app.id}/delete`,
          button: 'Delete this application',
          cancel: '/settings/applications',
        }),
      );
    } catch (err) {
      refusedWith(err, 404);
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });

  router.post('/settings/applications/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      await deleteApp(ctx, user.id, Number(req.params.id));
      res.redirect(303, '/settings/applications?done=app-deleted');
    } catch (err) {
      refusedWith(err, 404);
      sendPage(res, 404, notFoundPage(user, 'application'));
    }
  });
}
