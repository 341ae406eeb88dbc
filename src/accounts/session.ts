import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../context.ts';
import { hashToken } from '../shared/crypto.ts';
import { loadSessionKey } from './sessionKey.ts';
import {
  deleteExpiredWebSessionsOfUser,
  deleteWebSession,
  insertWebSession,
  webSessionStands,
} from './sessions.store.ts';

// The browser session of the platform pages: a signed cookie (HMAC-SHA256 with a key kept in
// app_secrets, so every API process accepts every other's cookies). Anonymous visitors get a
// session too, so the login form itself carries a CSRF token; those live in the cookie only. A
// signed-in session also needs its row in web_sessions: logout, a password change and the user's
// deletion remove it, so a copied cookie stops working at once (the signature alone would keep it
// valid until it expires).

export interface WebSession {
  sid: string;
  uid: number | null;
  /** Expiry, epoch seconds. */
  exp: number;
  /**
   * When the user logged in (entered a password), epoch seconds: an ID token's `auth_time` and what
   * `max_age` is measured from (OpenID Connect Core 2, 3.1.2.1). Signed-in sessions only.
   */
  auth_time?: number;
}

declare module 'express-serve-static-core' {
  interface Request {
    webSession?: WebSession;
  }
}

const SESSION_COOKIE = 'oa_session';

/**
 * The cookie's name: under https with the `__Host-` prefix, which browsers accept only with
 * Secure, Path=/ and no Domain, so a sibling subdomain cannot set or shadow it (RFC 6265bis 4.1.3.2).
 */
export function sessionCookieName(ctx: AppContext): string {
  return ctx.config.BASE_URL.startsWith('https:') ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}
const SESSION_TTL_S = 8 * 3600;

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function encodeSession(key: Buffer, session: WebSession): string {
  const payload = Buffer.from(JSON.stringify(session)).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

export function decodeSession(key: Buffer, cookie: string | undefined, now = Date.now()): WebSession | null {
  if (!cookie) return null;
  const [payload, mac, extra] = cookie.split('.');
  if (!payload || !mac || extra !== undefined || !equal(mac, sign(key, payload))) return null;
  try {
    const s = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as WebSession;
    if (typeof s.sid !== 'string' || typeof s.exp !== 'number' || s.exp * 1000 <= now) return null;
    if (s.uid !== null && !Number.isSafeInteger(s.uid)) return null;
    if (s.auth_time !== undefined && !Number.isSafeInteger(s.auth_time)) return null;
    return s;
  } catch {
    return null;
  }
}

function cookieOptions(ctx: AppContext): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.BASE_URL.startsWith('https:'),
    path: '/',
    maxAge: SESSION_TTL_S * 1000,
  };
}

function newSession(uid: number | null): WebSession {
  const now = Math.floor(Date.now() / 1000);
  return {
    sid: randomBytes(18).toString('base64url'),
    uid,
    exp: now + SESSION_TTL_S,
    ...(uid === null ? {} : { auth_time: now }),
  };
}

/**
 * When the session's user logged in, epoch seconds. A signed-in cookie from before auth_time was
 * recorded was made at login too, with a fixed lifetime, so its expiry tells the same instant.
 */
export function authTimeOf(session: WebSession): number {
  return session.auth_time ?? session.exp - SESSION_TTL_S;
}

/** Reads (or starts) the session of every page request. */
export function sessionMiddleware(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    try {
      const key = await loadSessionKey(ctx);
      let session = decodeSession(key, req.cookies?.[sessionCookieName(ctx)] as string | undefined);
      // A signed-in cookie whose server-side session has ended (logout elsewhere, password change): anonymous again.
      if (session?.uid && !(await webSessionStands(ctx.db, hashToken(session.sid), session.uid, Date.now())))
        session = null;
      if (!session) {
        session = newSession(null);
        res.cookie(sessionCookieName(ctx), encodeSession(key, session), cookieOptions(ctx));
      }
      req.webSession = session;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** A fresh session id at login (no session fixation), bound to the user; its auth_time is now. */
export async function startUserSession(ctx: AppContext, req: Request, res: Response, userId: number): Promise<void> {
  const key = await loadSessionKey(ctx);
  const session = newSession(userId);
  const now = Date.now();
  await deleteExpiredWebSessionsOfUser(ctx.db, userId, now);
  await insertWebSession(ctx.db, {
    id_hash: hashToken(session.sid),
    user_id: userId,
    created_at: now,
    expires_at: session.exp * 1000,
  });
  req.webSession = session;
  res.cookie(sessionCookieName(ctx), encodeSession(key, session), cookieOptions(ctx));
}

/** Logout: the server-side session ends (every copy of the cookie with it) and the cookie is cleared. */
export async function endSession(ctx: AppContext, req: Request, res: Response): Promise<void> {
  if (req.webSession?.uid) await deleteWebSession(ctx.db, hashToken(req.webSession.sid));
  const { maxAge: _maxAge, ...options } = cookieOptions(ctx);
  res.clearCookie(sessionCookieName(ctx), options);
}

/** Synchronizer token bound to the session id: HMAC(key, "csrf|" + sid). */
export async function csrfToken(ctx: AppContext, req: Request): Promise<string> {
  const key = await loadSessionKey(ctx);
  return sign(key, `csrf|${req.webSession!.sid}`);
}

export async function csrfValid(ctx: AppContext, req: Request): Promise<boolean> {
  const sent: unknown = (req.body as Record<string, unknown> | undefined)?.csrf_token;
  return typeof sent === 'string' && req.webSession !== undefined && equal(sent, await csrfToken(ctx, req));
}

/**
 * Where to come back to after login: only local paths, never `//host` or a scheme; without one, the
 * user's workflows (what the console is for; the settings are one link away).
 */
export function safeReturnTo(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : '/workflows';
}

/** The login page; `again`: shown even to a signed-in user (OpenID Connect `prompt=login`, `max_age`). */
export function loginUrl(returnTo: string, again = false): string {
  return `/login?return_to=${encodeURIComponent(returnTo)}${again ? '&prompt=login' : ''}`;
}

/** Pages for logged-in users only: others go to the login page and come back. */
export function requireUser(req: Request, res: Response, next: NextFunction): void {
  if (req.webSession?.uid) return next();
  res.redirect(303, loginUrl(req.originalUrl));
}
