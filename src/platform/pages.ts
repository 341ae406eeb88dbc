import { Router, type Request, type RequestHandler, type Response } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import type { AppContext } from '../context.ts';
import { splitScope } from '../oauth/scopes.ts';
import { listAuthorizedApps, revokeApplication } from '../oauth/authorizations.ts';
import { databaseRateLimitStore, retryAfterSeconds } from '../http/rateLimitStore.ts';
import { Problem } from '../shared/errors.ts';
import { htmlPages, type ErrorSurface } from '../http/errorDialects.ts';
import { errorPage } from './views/errorPage.ts';
import { ACCESS_TOKEN_PERMISSIONS, createAccessToken, deleteAccessToken, listAccessTokensOfUser, USAGE_SCENARIOS } from './accessTokens.ts';
import { createApp, deleteApp, listAppsForOwner, rotateSecret, type AppDetails } from './apps.ts';
import { html, layout, STYLESHEET, type Html } from './html.ts';
import { csrfToken, csrfValid, endSession, requireUser, safeReturnTo, sessionMiddleware, startUserSession } from './session.ts';
import { listOrgsForUser } from './orgs.ts';
import { findUserById, verifyLogin } from './users.ts';

// Server-rendered platform pages: login/logout and the settings for applications, raw access
// tokens and authorized apps. Every form carries a CSRF token bound to the session.

/** The platform's pages: not part of the API contract, so the validator leaves them alone. */
export const platformPagePaths = /^\/(login|logout|settings|assets)(\/|$)/;

export const platformPageErrors: ErrorSurface = { paths: platformPagePaths, dialect: htmlPages(errorPage) };

function sendPage(res: Response, status: number, title: string, body: Html, user?: { login: string; csrf: string }): void {
  res.status(status).set('Cache-Control', 'no-store').type('html').send(layout({ title, user }, body));
}

async function pageUser(ctx: AppContext, req: Request): Promise<{ id: number; login: string; csrf: string }> {
  const user = await findUserById(ctx.db, req.webSession!.uid!);
  if (!user) throw new Error('session user vanished');
  return { id: user.id, login: user.login, csrf: await csrfToken(ctx, req) };
}

function csrfProtect(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'POST' || (await csrfValid(ctx, req))) return next();
    sendPage(res, 403, 'Form expired', html`<h1>Form expired</h1><p class="error">The form expired or did not come from this site. Go back, reload the page and try again.</p>`);
  };
}

function loginPage(res: Response, status: number, csrf: string, returnTo: string, error?: string, login = ''): void {
  sendPage(
    res,
    status,
    'Log in',
    html`<h1>Log in</h1>${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/login">
<input type="hidden" name="csrf_token" value="${csrf}"><input type="hidden" name="return_to" value="${returnTo}">
<label for="login">Login</label><input type="text" id="login" name="login" value="${login}" autocomplete="username" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Log in</button></form>`,
  );
}

function tooManyAttempts(res: Response, retryAfterS: number): void {
  res.set('Retry-After', String(retryAfterS));
  sendPage(res, 429, 'Too many requests', html`<h1>Too many requests</h1><p class="error">Too many login attempts. Wait a few minutes and try again.</p>`);
}

function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** A repeated form field (checkboxes): the urlencoded parser gives a string for one, an array for more. */
function fields(req: Request, name: string): string[] {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((v): v is string => typeof v === 'string');
}

interface TokenInput {
  name: string;
  namespace: string;
  usageScenario: string;
  permissions: string[];
}

const date = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

function secretPage(res: Response, user: { login: string; csrf: string }, title: string, clientId: string, secret: string): void {
  sendPage(
    res,
    200,
    title,
    html`<h1>${title}</h1><p class="notice">Copy the client secret now: it is shown only once.</p>
<p>client_id: <code id="client-id">${clientId}</code></p><p>client_secret: <code id="client-secret">${secret}</code></p>
<p><a href="/settings/applications">Back to applications</a></p>`,
    user,
  );
}

export function platformPagesRouter(ctx: AppContext): Router {
  const router = Router();
  const session = sessionMiddleware(ctx);
  const csrf = csrfProtect(ctx);
  const windowMs = 15 * 60_000;
  const limited: RequestHandler = (req, res, _next) => tooManyAttempts(res, retryAfterSeconds(req, windowMs));
  // Failed attempts per address (guessing many accounts) and per account (one account from many addresses).
  const loginPerIp = rateLimit({
    windowMs,
    limit: 100,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
    store: databaseRateLimitStore(ctx.db, 'login-ip:'),
    handler: limited,
  });
  const loginPerAccount = rateLimit({
    windowMs,
    limit: 10,
    standardHeaders: false,
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    keyGenerator: (req) => `login:${field(req, 'login').toLowerCase()}`,
    store: databaseRateLimitStore(ctx.db, 'login-account:'),
    handler: limited,
  });

  router.get('/assets/app.css', (_req, res) => {
    res.type('css').set('Cache-Control', 'public, max-age=3600').send(STYLESHEET);
  });

  router.get('/login', session, async (req, res) => {
    const returnTo = safeReturnTo(req.query.return_to);
    if (req.webSession?.uid) return res.redirect(303, returnTo);
    loginPage(res, 200, await csrfToken(ctx, req), returnTo);
  });

  router.post('/login', session, csrf, loginPerIp, loginPerAccount, async (req, res) => {
    const login = field(req, 'login');
    const password = (req.body as Record<string, unknown>).password;
    const returnTo = safeReturnTo(req.body.return_to);
    const user = login && typeof password === 'string' ? await verifyLogin(ctx.db, login, password) : null;
    if (!user) {
      loginPage(res, 401, await csrfToken(ctx, req), returnTo, 'Incorrect login or password.', login);
      return;
    }
    await startUserSession(ctx, req, res, user.id);
    res.redirect(303, returnTo);
  });

  router.post('/logout', session, csrf, (_req, res) => {
    endSession(ctx, res);
    res.redirect(303, '/login');
  });

  router.use('/settings', session, requireUser, csrf);
  router.get('/settings', (_req, res) => res.redirect(303, '/settings/applications'));

  router.get('/settings/applications', async (req, res) => {
    const user = await pageUser(ctx, req);
    await applicationsPage(res, 200, user, []);
  });

  async function applicationsPage(res: Response, status: number, user: { id: number; login: string; csrf: string }, problems: string[], input?: Required<AppDetails>): Promise<void> {
    const apps = await listAppsForOwner(ctx.db, user.id);
    const rows = apps.map(
      (a) => html`<tr><td><strong>${a.name}</strong><br><small>${a.description}</small></td><td><code>${a.client_id}</code><br><small>${a.redirect_uri}</small></td>
<td><form method="post" action="/settings/applications/${a.id}/rotate"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Rotate secret</button></form>
<form method="post" action="/settings/applications/${a.id}/delete"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Delete</button></form></td></tr>`,
    );
    sendPage(
      res,
      status,
      'Applications',
      html`<h1>Your applications</h1>
${apps.length ? html`<table><tr><th>Application</th><th>Client</th><th></th></tr>${rows}</table>` : html`<p>No applications yet.</p>`}
<h2>Register an application</h2>${problems.map((p) => html`<p class="error">${p}</p>`)}
<form method="post" action="/settings/applications"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="name">Name</label><input type="text" id="name" name="name" value="${input?.name ?? ''}" required>
<label for="description">Description</label><textarea id="description" name="description">${input?.description ?? ''}</textarea>
<label for="homepage">Homepage</label><input type="url" id="homepage" name="homepage" value="${input?.homepage ?? ''}" required>
<label for="redirect_uri">Callback URL (redirect_uri)</label><input type="url" id="redirect_uri" name="redirect_uri" value="${input?.redirectUri ?? ''}" required>
<button type="submit">Register</button></form>`,
      user,
    );
  }

  router.post('/settings/applications', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input: Required<AppDetails> = { name: field(req, 'name'), description: field(req, 'description'), homepage: field(req, 'homepage'), redirectUri: field(req, 'redirect_uri') };
    try {
      const { app, clientSecret } = await createApp(ctx.db, { ownerUserId: user.id, ...input });
      secretPage(res, user, `Registered ${app.name}`, app.client_id, clientSecret);
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 400) throw err;
      await applicationsPage(res, 400, user, err.errors?.map((e) => e.message) ?? [err.message], input);
    }
  });

  router.post('/settings/applications/:id/rotate', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      const { app, clientSecret } = await rotateSecret(ctx.db, user.id, Number(req.params.id));
      secretPage(res, user, `New secret for ${app.name}`, app.client_id, clientSecret);
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, 'Not found', html`<h1>Not found</h1><p>No such application.</p>`, user);
    }
  });

  router.post('/settings/applications/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      await deleteApp(ctx.db, user.id, Number(req.params.id));
      res.redirect(303, '/settings/applications');
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, 'Not found', html`<h1>Not found</h1><p>No such application.</p>`, user);
    }
  });

  async function accessTokensPage(res: Response, status: number, user: { id: number; login: string; csrf: string }, problems: string[], input?: TokenInput): Promise<void> {
    const [tokens, orgs] = await Promise.all([listAccessTokensOfUser(ctx.db, user.id), listOrgsForUser(ctx.db, user.id)]);
    const namespaces = [user.login, ...orgs.map((o) => o.namespace)];
    const rows = tokens.map(
      (t) => html`<tr><td><strong>${t.name}</strong><br><small><code>${t.token_prefix}…</code></small></td><td>${t.namespace}</td><td>${t.usage_scenario}</td>
<td>${t.permissions.map((p) => html`<code>${p}</code> `)}</td><td>${date(t.created_at)}<br><small>${t.last_used_at === null ? 'never used' : `used ${date(t.last_used_at)}`}</small></td>
<td><form method="post" action="/settings/tokens/${t.id}/delete"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Delete</button></form></td></tr>`,
    );
    const selected = (value: string, chosen: string | undefined) => (value === chosen ? html` selected` : '');
    sendPage(
      res,
      status,
      'Access tokens',
      html`<h1>Access tokens</h1><p>Raw access tokens (API keys) call the workflows and serverless APIs. Apps you authorize never see them: they get short-lived proxy tokens instead.</p>
${tokens.length ? html`<table><tr><th>Token</th><th>Namespace</th><th>Usage</th><th>Permissions</th><th>Created</th><th></th></tr>${rows}</table>` : html`<p>No access tokens yet.</p>`}
<h2>Create an access token</h2>${problems.map((p) => html`<p class="error">${p}</p>`)}
<form method="post" action="/settings/tokens"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="name">Name</label><input type="text" id="name" name="name" value="${input?.name ?? ''}" required>
<label for="namespace">Namespace</label><select id="namespace" name="namespace">${namespaces.map((n) => html`<option value="${n}"${selected(n, input?.namespace)}>${n}</option>`)}</select>
<label for="usage_scenario">Usage scenario</label><select id="usage_scenario" name="usage_scenario">${USAGE_SCENARIOS.map((u) => html`<option value="${u}"${selected(u, input?.usageScenario)}>${u}</option>`)}</select>
<fieldset><legend>Permissions</legend>${ACCESS_TOKEN_PERMISSIONS.map(
        (p) => html`<label><input type="checkbox" name="permissions" value="${p}"${input?.permissions.includes(p) ? html` checked` : ''}> ${p}</label>`,
      )}</fieldset>
<button type="submit">Create token</button></form>`,
      user,
    );
  }

  router.get('/settings/tokens', async (req, res) => {
    const user = await pageUser(ctx, req);
    await accessTokensPage(res, 200, user, []);
  });

  router.post('/settings/tokens', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input: TokenInput = { name: field(req, 'name'), namespace: field(req, 'namespace'), usageScenario: field(req, 'usage_scenario'), permissions: fields(req, 'permissions') };
    try {
      const { token, record } = await createAccessToken(ctx.db, { userId: user.id, ...input });
      // The one time the plaintext exists outside the user's hands: this no-store page.
      sendPage(
        res,
        200,
        `Created ${record.name}`,
        html`<h1>Created ${record.name}</h1><p class="notice">Copy the token now: it is shown only once.</p>
<p>Namespace: ${record.namespace} · usage: ${record.usage_scenario}</p><p><code id="access-token">${token}</code></p>
<p><a href="/settings/tokens">Back to access tokens</a></p>`,
        user,
      );
    } catch (err) {
      if (!(err instanceof Problem) || (err.status !== 400 && err.status !== 404)) throw err;
      await accessTokensPage(res, 400, user, err.errors?.map((e) => e.message) ?? [err.message], input);
    }
  });

  router.post('/settings/tokens/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      // Proxy tokens minted from it are refused from their next call on (src/open/proxyTokenAuth.ts).
      await deleteAccessToken(ctx.db, user.id, Number(req.params.id));
      res.redirect(303, '/settings/tokens');
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 404) throw err;
      sendPage(res, 404, 'Not found', html`<h1>Not found</h1><p>No such access token.</p>`, user);
    }
  });

  router.get('/settings/authorizations', async (req, res) => {
    const user = await pageUser(ctx, req);
    const apps = await listAuthorizedApps(ctx.db, user.id);
    const rows = apps.map(
      (a) => html`<tr><td><strong>${a.name}</strong><br><small>${a.homepage}</small></td><td>${splitScope(a.scope).map((s) => html`<code>${s}</code> `)}</td><td>${date(a.authorizedAt)}</td>
<td><form method="post" action="/settings/authorizations/${a.applicationId}/revoke"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Revoke</button></form></td></tr>`,
    );
    sendPage(
      res,
      200,
      'Authorized applications',
      html`<h1>Authorized applications</h1>${apps.length ? html`<table><tr><th>Application</th><th>Scopes</th><th>Authorized</th><th></th></tr>${rows}</table>` : html`<p>You have not authorized any application.</p>`}`,
      user,
    );
  });

  router.post('/settings/authorizations/:applicationId/revoke', async (req, res) => {
    const user = await pageUser(ctx, req);
    const id = Number(req.params.applicationId);
    if (Number.isSafeInteger(id)) await revokeApplication(ctx.db, user.id, id);
    res.redirect(303, '/settings/authorizations');
  });

  return router;
}

