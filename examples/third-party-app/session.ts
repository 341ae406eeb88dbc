// The app's own session, kept in one cookie: an encrypted and authenticated JWT (JWE, dir +
// A256GCM via jose), HttpOnly and SameSite=Lax. Nothing in it can be read or altered by the browser,
// so it can hold the OAuth state, the PKCE verifier and the tokens without a server-side store.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { EncryptJWT, jwtDecrypt } from 'jose';

export const SESSION_COOKIE = 'tpa_session';
const SESSION_SECONDS = 8 * 3600;

export interface SessionData {
  /** Between "Sign in" and the callback: the values the callback must see again (RFC 6749 10.12, RFC 7636). */
  flow?: { state: string; codeVerifier: string };
  /** After sign-in. */
  tokens?: { accessToken: string; refreshToken?: string; expiresAt: number; scope: string };
  /** The proxy token picked on the home page, for the gateway (never the raw access token). */
  proxy?: { namespace: string; id: number; name: string; usageScenario: string; token: string; expiresAt: number };
}

export interface SessionStore {
  read(req: Request): Promise<SessionData>;
  write(res: Response, data: SessionData): Promise<void>;
  clear(res: Response): void;
}

/** `secret` (any length) is hashed to the 256-bit content-encryption key. */
export function sessionStore(secret: string, secure: boolean): SessionStore {
  const key = createHash('sha256').update(secret).digest();
  const cookieOptions = { httpOnly: true, sameSite: 'lax', secure, path: '/' } as const;
  return {
    async read(req) {
      const value = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
      if (!value) return {};
      try {
        const { payload } = await jwtDecrypt(value, key);
        return (payload.data ?? {}) as SessionData;
      } catch {
        return {}; // expired, tampered with, or sealed with another secret (the app restarted)
      }
    },
    async write(res, data) {
      const value = await new EncryptJWT({ data })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setIssuedAt()
        .setExpirationTime(`${SESSION_SECONDS}s`)
        .encrypt(key);
      res.cookie(SESSION_COOKIE, value, { ...cookieOptions, maxAge: SESSION_SECONDS * 1000 });
    },
    clear(res) {
      res.clearCookie(SESSION_COOKIE, cookieOptions);
    },
  };
}
