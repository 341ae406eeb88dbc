import { Router, type RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { AppContext } from '../../context.ts';
import { databaseRateLimitStore, retryAfterSeconds } from '../../http/rateLimitStore.ts';
import { csrfToken, startUserSession } from '../../accounts/session.ts';
import { createUser } from '../../accounts/users.ts';
import { messagePage } from '../views/message.ts';
import { signupPage } from '../views/signup.ts';
import { field, formProblemsOf, refusedWith, sendPage } from './common.ts';

// GET/POST /signup: anyone creates their own account, when the operator allows it (SIGNUP; on by
// default in development only, as Auth0's and GitHub's self-service sign-up can be turned off).
// Through the same createUser as the admin CLI; limited per address so no one fills the table.

export function signupRouter(ctx: AppContext, session: RequestHandler, csrf: RequestHandler): Router {
  const router = Router();
  const off: RequestHandler = (_req, res, next) => {
    if (ctx.config.SIGNUP) return next();
    sendPage(
      res,
      404,
      messagePage({
        title: 'Sign-up is off',
        message: 'Accounts on this service are created by its operator. Ask them for one, then log in.',
      }),
    );
  };
  const windowMs = 60 * 60_000;
  const perIp = rateLimit({
    windowMs,
    limit: 20,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
    store: databaseRateLimitStore(ctx.db, 'signup-ip:'),
    handler: (req, res) => {
      res.set('Retry-After', String(retryAfterSeconds(req, windowMs)));
      sendPage(
        res,
        429,
        messagePage({
          title: 'Too many requests',
          message: 'Too many accounts created from this address. Try again later.',
          error: true,
        }),
      );
    },
  });

  router.get('/signup', off, session, async (req, res) => {
    if (req.webSession?.uid) return res.redirect(303, '/workflows');
    sendPage(res, 200, signupPage({ csrf: await csrfToken(ctx, req), problems: [] }));
  });

  router.post('/signup', off, session, csrf, perIp, async (req, res) => {
    const input = { login: field(req, 'login'), name: field(req, 'name') };
    const password = (req.body as Record<string, unknown>).password;
    try {
      const user = await createUser(ctx, { ...input, password: typeof password === 'string' ? password : '' });
      await startUserSession(ctx, req, res, user.id);
      res.redirect(303, '/workflows');
    } catch (err) {
      const problem = refusedWith(err, 400, 409);
      const problems =
        problem.status === 409
          ? [{ field: 'login', message: 'This login is taken (by a user or an organization). Choose another.' }]
          : formProblemsOf(problem);
      sendPage(res, problem.status, signupPage({ csrf: await csrfToken(ctx, req), ...input, problems }));
    }
  });

  return router;
}
