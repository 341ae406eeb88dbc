import type { DbContext } from '../context.ts';
import { sessionNotFound, userNotFound } from '../shared/errors.ts';
import { deleteWebSessionsOfUser, deleteWebSessionsOfUserByPrefix, listWebSessionsOfUser } from './sessions.store.ts';
import { findUserByLogin } from './users.ts';

// Operators' view of a user's signed-in browser sessions (admin CLI `session list` / `session
// revoke`). A session is named by the first 16 hex characters of its id's SHA-256, as stored:
// enough to tell a user's sessions apart, and nothing that signs a cookie.

export const SESSION_ID_LENGTH = 16;

export interface SessionInfo {
  id: string;
  created_at: string;
  expires_at: string;
}

async function userOf(ctx: DbContext, login: string) {
  const user = await findUserByLogin(ctx, login);
  if (!user) throw userNotFound(login);
  return user;
}

/** The user's sessions that have not expired, newest first. */
export async function listUserSessions(ctx: DbContext, login: string, now = Date.now()): Promise<SessionInfo[]> {
  const user = await userOf(ctx, login);
  return (await listWebSessionsOfUser(ctx.db, user.id, now)).map((s) => ({
    id: s.id_hash.slice(0, SESSION_ID_LENGTH),
    created_at: new Date(s.created_at).toISOString(),
    expires_at: new Date(s.expires_at).toISOString(),
  }));
}

/** Whether `id` looks like a session id of `session list` (checked before it reaches SQL). */
export const isSessionId = (id: string) => new RegExp(`^[0-9a-f]{${SESSION_ID_LENGTH}}$`).test(id);

/**
 * Ends one session of the user (its cookie, every copy, stops working at once: each request checks
 * its row), or all of them. 404 when the user or that session does not exist.
 */
export async function revokeUserSessions(
  ctx: DbContext,
  login: string,
  which: { id: string } | 'all',
): Promise<number> {
  const user = await userOf(ctx, login);
  if (which === 'all') return deleteWebSessionsOfUser(ctx.db, user.id);
  const ended = await deleteWebSessionsOfUserByPrefix(ctx.db, user.id, which.id);
  if (ended === 0) throw sessionNotFound(user.login, which.id);
  return ended;
}
