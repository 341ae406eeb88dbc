import { Router, type RequestHandler, type Response } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import type { AppContext } from '../../context.ts';
import { databaseRateLimitStore, retryAfterSeconds } from '../../http/rateLimitStore.ts';
import { csrfToken, endSession, safeReturnTo, startUserSession } from '../../accounts/session.ts';
import { findAppByClientId } from '../../accounts/apps.ts';
import { anyUserExists, verifyLogin } from '../../accounts/users.ts';
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

export function loginRouter(ctx: AppContext, session: RequestHandler, csrf: RequestHandler): Router {
  const router = Router();
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

  const pageExtras = { signup: ctx.config.SIGNUP, demoHint: ctx.config.DEMO && ctx.config.NODE_ENV === 'development' };

  /** The name of the registered application whose authorization request the login returns to, if it is one. */
  async function appAskingFor(returnTo: string): Promise<string | undefined> {
    if (!returnTo.startsWith('/oauth/authorize?')) return undefined;
    const clientId = new URLSearchParams(returnTo.slice(returnTo.indexOf('?'))).getAll('client_id');
    if (clientId.length !== 1 || !clientId[0]) return undefined;
    return (await findAppByClientId(ctx, clientId[0]))?.name;
  }

  router.get('/login', session, async (req, res) => {
    const returnTo = safeReturnTo(req.query.return_to);
    // A signed-in user goes straight back, unless the authorization request asks to log in again.
    if (req.webSession?.uid && req.query.prompt !== 'login') return res.redirect(303, returnTo);
    // No account at all (production creates no demo user): say how the first one is made.
    const noAccount = (await anyUserExists(ctx))
      ? {}
      : { error: 'No account exists yet. The operator creates the first one with: npm run -s admin -- user create' };
    sendPage(
      res,
      200,
      loginPage({
        csrf: await csrfToken(ctx, req),
        returnTo,
        appName: await appAskingFor(returnTo),
        ...noAccount,
        ...pageExtras,
      }),
    );
  });

  router.post('/login', session, csrf, loginPerIp, loginPerAccountAndIp, async (req, res) => {
    const login = field(req, 'login');
    const password = (req.body as Record<string, unknown>).password;
    const returnTo = safeReturnTo(req.body.return_to);
    const user = login && typeof password === 'string' ? await verifyLogin(ctx, login, password) : null;
    if (!user) {
      sendPage(
        res,
        401,
        loginPage({
          csrf: await csrfToken(ctx, req),
          returnTo,
          appName: await appAskingFor(returnTo),
          error: 'Incorrect login or password.',
          login,
          ...pageExtras,
        }),
      );
      return;
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
