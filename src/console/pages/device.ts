import { Router, type Request, type RequestHandler, type Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { AppContext } from '../../context.ts';
import { databaseRateLimitStore, retryAfterSeconds } from '../../http/rateLimitStore.ts';
import { authTimeOf } from '../../accounts/session.ts';
import { decideDeviceRequest, findDeviceRequest } from '../../oauth/device.ts';
import { deviceCodePage, deviceConsentPage, deviceDonePage } from '../views/device.ts';
import { messagePage } from '../views/message.ts';
import { field, pageUser, sendPage } from './common.ts';

// GET/POST /device and POST /device/decision: the device flow's verification page (RFC 8628 3.3),
// behind the session, requireUser and CSRF checks (router.ts). A user code has about 2^34.5
// values and lives minutes, so wrong codes are limited per user and per address (5.1).

const GUESS_WINDOW_MS = 15 * 60_000;
/** Wrong codes a user may enter per window (a typo or two, not a search). */
export const DEVICE_GUESSES_PER_USER = 10;
/** Wrong codes per address and window, across users (several people behind one NAT). */
export const DEVICE_GUESSES_PER_ADDRESS = 50;

const WRONG_CODE =
  'That code is not valid: it may be mistyped, expired or already used. Check the code on your device and try again.';

/** Wrong codes (answers of 400 and up) per user and per address; right ones are not counted. */
function guessLimits(ctx: AppContext): RequestHandler[] {
  const limited: RequestHandler = (req, res) => {
    res.set('Retry-After', String(retryAfterSeconds(req, GUESS_WINDOW_MS)));
    sendPage(
      res,
      429,
      messagePage({
        title: 'Too many requests',
        message: 'Too many wrong codes. Wait a few minutes and try again.',
        error: true,
      }),
    );
  };
  const common = {
    windowMs: GUESS_WINDOW_MS,
    standardHeaders: false,
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    handler: limited,
  } as const;
  return [
    rateLimit({
      ...common,
      limit: DEVICE_GUESSES_PER_ADDRESS,
      keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
      store: databaseRateLimitStore(ctx.db, 'device-ip:'),
    }),
    rateLimit({
      ...common,
      limit: DEVICE_GUESSES_PER_USER,
      keyGenerator: (req) => String(req.webSession!.uid),
      store: databaseRateLimitStore(ctx.db, 'device-user:'),
    }),
  ];
}

async function wrongCode(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const user = await pageUser(ctx, req);
  sendPage(
    res,
    400,
    deviceCodePage({
      user,
      prefilled: field(req, 'user_code'),
      problems: [{ field: 'user_code', message: WRONG_CODE }],
    }),
  );
}

export function devicePagesRouter(ctx: AppContext): Router {
  const router = Router();
  const limits = guessLimits(ctx);

  // verification_uri_complete fills the code in; the user still confirms it (RFC 8628 5.4).
  router.get('/device', async (req, res) => {
    const prefilled = typeof req.query.user_code === 'string' ? req.query.user_code.slice(0, 32) : '';
    sendPage(res, 200, deviceCodePage({ user: await pageUser(ctx, req), prefilled, problems: [] }));
  });

  router.post('/device', ...limits, async (req, res) => {
    const request = await findDeviceRequest(ctx, field(req, 'user_code'));
    if (!request) return wrongCode(ctx, req, res);
    sendPage(res, 200, deviceConsentPage({ user: await pageUser(ctx, req), request }));
  });

  router.post('/device/decision', ...limits, async (req, res) => {
    const request = await findDeviceRequest(ctx, field(req, 'user_code'));
    const approved = field(req, 'decision') === 'allow';
    const decided =
      request !== null &&
      (await decideDeviceRequest(ctx, request, {
        approved,
        userId: req.webSession!.uid!,
        authTime: authTimeOf(req.webSession!) * 1000,
      }));
    if (!decided) return wrongCode(ctx, req, res);
    sendPage(res, 200, deviceDonePage({ user: await pageUser(ctx, req), approved, appName: request.client.name }));
  });
  return router;
}
