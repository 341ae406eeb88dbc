import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import type { SharedRateLimiter } from '../../http/sharedRateLimiter.ts';
import { htmlPages, type ErrorSurface } from '../../http/errorDialects.ts';
import { requireUser, sessionMiddleware } from '../../accounts/session.ts';
import { errorPage } from '../../html/errorPage.ts';
import { accessTokensRouter } from './accessTokens.ts';
import { applicationsRouter } from './applications.ts';
import { authorizationsRouter } from './authorizations.ts';
import { csrfProtect } from './common.ts';
import { loginRouter } from './login.ts';
import { approvalLinksRouter } from './approvals.ts';
import { passwordRouter } from './password.ts';
import { signupRouter } from './signup.ts';
import { organizationsRouter } from './organizations.ts';
import { runControlsRouter } from './runControls.ts';
import { callbackPagesRouter } from './callbacks.ts';
import { budgetPagesRouter } from './budgets.ts';
import { mcpToolPagesRouter } from './mcpTool.ts';
import { consoleScripts } from './scripts.ts';
import { workflowDeletionRouter } from './workflowDeletion.ts';
import { workflowEditorRouter } from './workflowEditor.ts';
import { workflowPagesRouter } from './workflows.ts';
import { devicePagesRouter } from './device.ts';
import { editorRunsRouter } from './editorRuns.ts';

// Server-rendered platform pages: login/logout, the settings for applications, raw access
// tokens and authorized apps, and the user's workflows and runs, one module per area. Every form
// carries a CSRF token bound to the session; views are pure functions in ../views/.

/** The platform's pages: not part of the API contract, so the validator leaves them alone. */
export const platformPagePaths = /^\/(login|logout|signup|settings|workflows|assets|approvals|device)(\/|$)/;

export const platformPageErrors: ErrorSurface = { paths: platformPagePaths, dialect: htmlPages(errorPage) };

/** The console's one stylesheet (src/console/assets/), read once at start. */
const STYLESHEET = readFileSync(new URL('../assets/app.css', import.meta.url), 'utf8');

/** The editor canvas library's stylesheet, the one its package exports, read once at start. */
const CANVAS_STYLESHEET = readFileSync(createRequire(import.meta.url).resolve('@xyflow/react/dist/style.css'), 'utf8');

/** `runStarts`: the per-user run quotas' count (USER_RUNS_PER_MINUTE), shared with the API's runs. */
export function platformPagesRouter(ctx: AppContext, runStarts?: SharedRateLimiter): Router {
  const router = Router();
  const session = sessionMiddleware(ctx);
  const csrf = csrfProtect(ctx);
  // Every page's script (console.js) and the workflow editor's (editor.js), built at start from
  // src/console/browser/; a build that fails is a bug, logged here and a 500 for the script.
  const scripts = consoleScripts(ctx.config.NODE_ENV === 'production');
  // A terminal's Ctrl-C signals the whole process group, esbuild's service with it: a build cut
  // short by the service's own stop is no bug. The check waits a moment, as the two signals'
  // handlers may run in either order.
  scripts.catch((err: unknown) => {
    const report = () =>
      ctx.stopping
        ? ctx.logger.info('the console scripts were not built: the service stopped first')
        : ctx.logger.error({ err }, 'the console scripts did not build');
    setTimeout(report, 1000).unref();
  });

  router.get('/assets/app.css', (_req, res) => {
    res.type('css').set('Cache-Control', 'public, max-age=3600').send(STYLESHEET);
  });
  router.get('/assets/canvas.css', (_req, res) => {
    res.type('css').set('Cache-Control', 'public, max-age=3600').send(CANVAS_STYLESHEET);
  });
  router.get('/assets/:script', async (req, res, next) => {
    const script = (await scripts).get(req.params.script);
    if (!script) return next();
    res.type('js').set('Cache-Control', 'public, max-age=3600').send(script);
  });
  router.use(loginRouter(ctx, session, csrf), signupRouter(ctx, session, csrf));
  router.use(approvalLinksRouter(ctx, session, csrf));

  router.use('/settings', session, requireUser, csrf);
  router.get('/settings', (_req, res) => res.redirect(303, '/settings/applications'));
  router.use(
    applicationsRouter(ctx),
    accessTokensRouter(ctx),
    authorizationsRouter(ctx),
    organizationsRouter(ctx),
    passwordRouter(ctx),
  );

  router.use('/workflows', session, requireUser, csrf);
  // The editor first: /workflows/new is not a workflow's id.
  router.use(
    workflowEditorRouter(ctx),
    workflowPagesRouter(ctx, runStarts),
    runControlsRouter(ctx, runStarts),
    workflowDeletionRouter(ctx),
    callbackPagesRouter(ctx),
    // A workflow's budget and an API key's (/settings/tokens/{id}/budget): both groups' session and CSRF checks have run.
    budgetPagesRouter(ctx),
    mcpToolPagesRouter(ctx),
    editorRunsRouter(ctx, runStarts),
  );

  // The device flow's verification page (RFC 8628 3.3): signed-in users only.
  router.use('/device', session, requireUser, csrf);
  router.use(devicePagesRouter(ctx));
  return router;
}
