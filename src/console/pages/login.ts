import { Router, type Request, type RequestHandler, type Response } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import type { AppContext } from '../../context.ts';
import { databaseRateLimitStore, retryAfterSeconds } from '../../http/rateLimitStore.ts';
import { csrfToken, endSession, safeReturnTo, startUserSession } from '../../accounts/session.ts';
import { findAppByClientId } from '../../accounts/apps.ts';
import { anyUserExists, verifyLogin } from '../../accounts/users.ts';
import type { Html } from '../../html/html.ts';
import { loginPage } from '../views/login.ts';
import { messagePage } from '../views/message.ts';
import { field, sendPage } from './common.ts';

// GET/POST /login and POST /logout. Failed logins are limited per address (guessing many
// accounts) and per account and address (one account guessed from one address).

function tooManyAttempts(res: Response, retryAfterS: number): void {
  res.set('Retry-After', String(retryAfterS));
  sendPage(
    res,
    429,
    messagePage({
      title: 'Too many requests',
      message: 'Too many login attempts. Wait a few minutes and try again.',
      error: true,
    }),
  );
}

/** Failed logins, limited per address and per account and address (successful ones are not counted). */
function loginLimits(ctx: AppContext): RequestHandler[] {
  const windowMs = 15 * 60_000;
  const limited: RequestHandler = (req, res, _next) => tooManyAttempts(res, retryAfterSeconds(req, windowMs));
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
  // Never per account alone: then anyone could lock a user out with ten wrong passwords, while the
  // right password from the user's own address must pass (OWASP authentication cheat sheet).
  const loginPerAccountAndIp = rateLimit({
    windowMs,
    limit: 10,
    standardHeaders: false,
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    keyGenerator: (req) => `login:${field(req, 'login').toLowerCase()}|${ipKeyGenerator(req.ip ?? '')}`,
    store: databaseRateLimitStore(ctx.db, 'login-account-ip:'),
    handler: limited,
  });
  return [loginPerIp, loginPerAccountAndIp];
}

/** The name of the registered application whose authorization request the login returns to, if it is one. */
async function appAskingFor(ctx: AppContext, returnTo: string): Promise<string | undefined> {
  if (!returnTo.startsWith('/oauth/authorize?')) return undefined;
  const clientId = new URLSearchParams(returnTo.slice(returnTo.indexOf('?'))).getAll('client_id');
  if (clientId.length !== 1 || !clientId[0]) return undefined;
  return (await findAppByClientId(ctx, clientId[0]))?.name;
}

/** The login page for this request, returning to `returnTo`, with what `extra` adds (an error, the login typed). */
async function loginPageFor(
  ctx: AppContext,
  req: Request,
  returnTo: string,
  extra: { error?: string; login?: string },
): Promise<Html> {
  return loginPage({
    csrf: await csrfToken(ctx, req),
    returnTo,
    appName: await appAskingFor(ctx, returnTo),
    ...extra,
    signup: ctx.config.SIGNUP,
    demoHint: ctx.config.DEMO && ctx.config.NODE_ENV === 'development',
  });
}

export function loginRouter(ctx: AppContext, session: RequestHandler, csrf: RequestHandler): Router {
  const router = Router();

  router.get('/login', session, async (req, res) => {
    const returnTo = safeReturnTo(req.query.return_to);
    // A signed-in user goes straight back, unless the authorization request asks to log in again.
    if (req.webSession?.uid && req.query.prompt !== 'login') return res.redirect(303, returnTo);
    // No account at all (production creates no demo user): say how the first one is made.
    const noAccount = (await anyUserExists(ctx))
      ? {}
      : { error: 'No account exists yet. The operator creates the first one with: npm run -s admin -- user create' };
    sendPage(res, 200, await loginPageFor(ctx, req, returnTo, noAccount));
  });

  router.post('/login', session, csrf, ...loginLimits(ctx), async (req, res) => {
    const login = field(req, 'login');
    const password = (req.body as Record<string, unknown>).password;
    const returnTo = safeReturnTo(req.body.return_to);
    const user = login && typeof password === 'string' ? await verifyLogin(ctx, login, password) : null;
    if (!user) {
      const error = 'Incorrect login or password.';
      return sendPage(res, 401, await loginPageFor(ctx, req, returnTo, { error, login }));
    }
    await startUserSession(ctx, req, res, user.id);
    res.redirect(303, returnTo);
  });

  router.post('/logout', session, csrf, async (req, res) => {
    await endSession(ctx, req, res);
    res.redirect(303, '/login');
  });

  return router;
}
