import { Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { AppContext } from '../../context.ts';
import { databaseRateLimitStore, retryAfterSeconds } from '../../http/rateLimitStore.ts';
import { startUserSession } from '../../accounts/session.ts';
import { setPassword, verifyLogin } from '../../accounts/users.ts';
import { messagePage } from '../views/message.ts';
import { passwordPage } from '../views/password.ts';
import { doneMessage, pageUser, refusedWith, sendPage } from './common.ts';

// /settings/password: a signed-in user changes their password, proving the current one (a
// borrowed session alone must not take the account over). setPassword ends every browser
// session of the user; this browser gets a fresh one, so the user stays signed in here only.

export function passwordRouter(ctx: AppContext): Router {
  const router = Router();
  const windowMs = 15 * 60_000;
  // Wrong current passwords per user: a stolen session cannot guess its way to the password.
  const perUser = rateLimit({
    windowMs,
    limit: 10,
    standardHeaders: false,
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    keyGenerator: (req) => `password:${req.webSession!.uid!}`,
    store: databaseRateLimitStore(ctx.db, 'password-user:'),
    handler: (req, res) => {
      res.set('Retry-After', String(retryAfterSeconds(req, windowMs)));
      sendPage(
        res,
        429,
        messagePage({
          title: 'Too many requests',
          message: 'Too many wrong passwords. Wait a few minutes and try again.',
          error: true,
        }),
      );
    },
  });

  router.get('/settings/password', async (req, res) => {
    sendPage(res, 200, passwordPage({ user: await pageUser(ctx, req), problems: [], flash: doneMessage(req) }));
  });

  router.post('/settings/password', perUser, async (req, res) => {
    const user = await pageUser(ctx, req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const current = typeof body.current_password === 'string' ? body.current_password : '';
    const next = typeof body.new_password === 'string' ? body.new_password : '';
    if (!(await verifyLogin(ctx, user.login, current))) {
      return sendPage(
        res,
        400,
        passwordPage({
          user,
          problems: [{ field: 'current_password', message: 'This is not your current password.' }],
        }),
      );
    }
    try {
      await setPassword(ctx, user.login, next);
    } catch (err) {
      const problem = refusedWith(err, 400);
      return sendPage(
        res,
        400,
        passwordPage({
          user,
          problems: [
            {
              field: 'new_password',
              message: `The new password ${problem.errors?.[0]?.message ?? 'is not accepted'}.`,
            },
          ],
        }),
      );
    }
    await startUserSession(ctx, req, res, user.id);
    res.redirect(303, '/settings/password?done=password-changed');
  });

  return router;
}
