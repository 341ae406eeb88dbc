// The admin CLI's commands on a user's credentials: access tokens (API keys) and browser sessions.
import {
  createAccessToken,
  DAY_MS,
  deleteAccessToken,
  listAccessTokens,
  listAccessTokensOfUser,
  MAX_TOKEN_EXPIRY_DAYS,
} from '../../accounts/accessTokens.ts';
import { isSessionId, listUserSessions, revokeUserSessions, SESSION_ID_LENGTH } from '../../accounts/webSessions.ts';
import { idOf, isoOrNull, UsageError, userIdOf, type Command, type Values } from '../command.ts';

/**
 * `--expires-in 30` / `30d` (days) or `--expires-at 2027-01-31[T12:00:00Z]`; neither: the token never expires.
 * As the console: at most MAX_TOKEN_EXPIRY_DAYS away.
 */
function expiryOf(v: Values, now: number): { expiresInDays?: number; expiresAt?: number } {
  const inDays = v['expires-in'];
  const at = v['expires-at'];
  if (inDays !== undefined && at !== undefined) throw new UsageError('give --expires-in or --expires-at, not both');
  if (inDays !== undefined) {
    const days = /^(\d{1,4})d?$/.exec(inDays.trim());
    if (!days || Number(days[1]) < 1 || Number(days[1]) > MAX_TOKEN_EXPIRY_DAYS) {
      throw new UsageError(
        `--expires-in must be a whole number of days from 1 to ${MAX_TOKEN_EXPIRY_DAYS}, as 30 or 30d (got "${inDays}")`,
      );
    }
    return { expiresInDays: Number(days[1]) };
  }
  if (at !== undefined) {
    // A date alone is that day's start in UTC; a date-time must say its offset, so no local clock decides.
    const iso = /^\d{4}-\d{2}-\d{2}$/.test(at) ? `${at}T00:00:00Z` : at;
    const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(iso)
      ? Date.parse(iso)
      : NaN;
    if (Number.isNaN(time))
      throw new UsageError(
        `--expires-at must be a date (2027-01-31, UTC) or a date-time with its offset (2027-01-31T18:00:00Z) (got "${at}")`,
      );
    if (time <= now) throw new UsageError(`--expires-at must be in the future (got "${at}")`);
    if (time > now + MAX_TOKEN_EXPIRY_DAYS * DAY_MS)
      throw new UsageError(`--expires-at must be at most ${MAX_TOKEN_EXPIRY_DAYS} days from now (got "${at}")`);
    return { expiresAt: time };
  }
  return {};
}

export const credentialCommands: Record<string, Command> = {
  'token create': {
    usage:
      'token create --user LOGIN --namespace NS --name NAME --usage-scenario paid|trial [--permission workflows]... [--expires-in DAYS | --expires-at DATE]',
    summary: `an access token (API key); prints it once. It never expires unless given --expires-in (1 to ${MAX_TOKEN_EXPIRY_DAYS} days) or --expires-at (a UTC date, or a date-time with its offset)`,
    options: ['user', 'namespace', 'name', 'usage-scenario', 'permission', 'expires-in', 'expires-at'],
    needs: ['user', 'namespace', 'name', 'usage-scenario'],
    check: (v) => void expiryOf(v, Date.now()),
    run: async (ctx, v) => {
      const { token, record } = await createAccessToken(ctx, {
        userLogin: v.user!,
        namespace: v.namespace!,
        name: v.name!,
        usageScenario: v['usage-scenario']!,
        permissions: v.permission ?? [],
        ...expiryOf(v, Date.now()),
      });
      return {
        id: record.id,
        token,
        namespace: record.namespace,
        name: record.name,
        usage_scenario: record.usage_scenario,
        permissions: record.permissions,
        expires_at: isoOrNull(record.expires_at),
      };
    },
  },
  'token list': {
    usage: 'token list --user LOGIN [--namespace NS]',
    summary: "the user's access tokens (in one namespace, or all)",
    options: ['user', 'namespace'],
    needs: ['user'],
    run: async (ctx, v) => {
      const userId = await userIdOf(ctx, v.user!);
      if (v.namespace !== undefined) return { data: await listAccessTokens(ctx, userId, v.namespace) };
      const tokens = await listAccessTokensOfUser(ctx, userId);
      return {
        data: tokens.map((t) => ({
          id: t.id,
          namespace: t.namespace,
          name: t.name,
          usage_scenario: t.usage_scenario,
          permissions: t.permissions,
          token_prefix: t.token_prefix,
          created_at: new Date(t.created_at).toISOString(),
          last_used_at: t.last_used_at === null ? null : new Date(t.last_used_at).toISOString(),
          expires_at: isoOrNull(t.expires_at),
        })),
      };
    },
  },
  'token revoke': {
    usage: 'token revoke --user LOGIN --id ID',
    summary: 'deletes the access token; proxy tokens minted from it stop working',
    options: ['user', 'id'],
    needs: ['user', 'id'],
    run: async (ctx, v) => {
      const id = idOf(v.id!, 'access token');
      await deleteAccessToken(ctx, await userIdOf(ctx, v.user!), id);
      return { revoked: true, id };
    },
  },
  'session list': {
    usage: 'session list --user LOGIN',
    summary: "the user's signed-in browser sessions that have not expired (id, created_at, expires_at), newest first",
    options: ['user'],
    needs: ['user'],
    run: async (ctx, v) => ({ data: await listUserSessions(ctx, v.user!) }),
  },
  'session revoke': {
    usage: 'session revoke --user LOGIN (--id ID | --all)',
    summary:
      'ends one browser session of the user (an id from session list), or all of them; the cookie stops working at once',
    options: ['user', 'id', 'all'],
    needs: ['user'],
    run: async (ctx, v) => {
      if ((v.id === undefined) === !v.all) throw new UsageError('give either --id ID (from session list) or --all');
      if (v.id !== undefined && !isSessionId(v.id))
        throw new UsageError(
          `--id must be a session id from session list: ${SESSION_ID_LENGTH} hex characters (got "${v.id}")`,
        );
      const ended = await revokeUserSessions(ctx, v.user!, v.id !== undefined ? { id: v.id } : 'all');
      return { revoked: ended, user: v.user!.toLowerCase(), ...(v.id !== undefined ? { id: v.id } : {}) };
    },
  },
};
