// The admin CLI's commands for clients that registered themselves (RFC 7591) and for the initial
// access tokens that let them register (CLIENT_REGISTRATION=initial_access_token).
import { deleteRegisteredApp, findAppByClientId, listAppsOfKind } from '../../accounts/apps.ts';
import { clientNotFound } from '../../shared/errors.ts';
import { countAuthorizedUsers, lastTokenIssuedAt } from '../../oauth/authorizations.ts';
import { toClient } from '../../oauth/clients.ts';
import {
  createRegistrationToken,
  listRegistrationTokens,
  revokeRegistrationToken,
} from '../../oauth/registrationTokens.ts';
import { idOf, isoOrNull, UsageError, type Command, type Values } from '../command.ts';

const DAY_MS = 24 * 60 * 60_000;
const MAX_DAYS = 365;

/** --expires-in DAYS (1 to 365, as 30 or 30d); none: the token never expires. */
function expiresInDays(v: Values): number | null {
  const given = v['expires-in'];
  if (given === undefined) return null;
  const days = /^(\d{1,4})d?$/.exec(given.trim());
  if (!days || Number(days[1]) < 1 || Number(days[1]) > MAX_DAYS)
    throw new UsageError(`--expires-in must be a whole number of days from 1 to ${MAX_DAYS} (got "${given}")`);
  return Number(days[1]);
}

export const clientCommands: Record<string, Command> = {
  'client list': {
    usage: 'client list',
    summary:
      'the clients that registered themselves (RFC 7591): client id, name, redirect URIs, created, last used (when known) and how many users authorized each',
    options: [],
    needs: [],
    run: async (ctx) => {
      const apps = await listAppsOfKind(ctx, 'dynamic');
      const data = [];
      for (const app of apps) {
        const client = toClient(app);
        data.push({
          client_id: client.clientId,
          name: client.name,
          token_endpoint_auth_method: client.tokenEndpointAuthMethod,
          redirect_uris: client.redirectUris,
          created_at: isoOrNull(Number(app.created_at)),
          // When a token was last issued to it: the stored tokens tell (expired ones are swept).
          last_used_at: isoOrNull(await lastTokenIssuedAt(ctx, app.id)),
          users: await countAuthorizedUsers(ctx, app.id),
        });
      }
      return { data };
    },
  },
  'client delete': {
    usage: 'client delete --client-id ID',
    summary:
      'deletes a client that registered itself, with every grant and token issued to it (they stop working at once)',
    options: ['client-id'],
    needs: ['client-id'],
    run: async (ctx, v) => {
      const app = await findAppByClientId(ctx, v['client-id']!);
      if (!app || app.registration_kind !== 'dynamic') throw clientNotFound(v['client-id']!);
      await deleteRegisteredApp(ctx, app.id);
      return { deleted: true, client_id: app.client_id };
    },
  },
  'registration-token create': {
    usage: 'registration-token create --name LABEL [--expires-in DAYS]',
    summary: `an initial access token for client registration (CLIENT_REGISTRATION=initial_access_token); prints it once. It never expires unless given --expires-in (1 to ${MAX_DAYS} days)`,
    options: ['name', 'expires-in'],
    needs: ['name'],
    check: (v) => void expiresInDays(v),
    run: async (ctx, v) => {
      const days = expiresInDays(v);
      const expiresAt = days === null ? null : Date.now() + days * DAY_MS;
      const { id, token } = await createRegistrationToken(ctx, { label: v.name!, expiresAt });
      return { id, token, name: v.name, expires_at: isoOrNull(expiresAt) };
    },
  },
  'registration-token list': {
    usage: 'registration-token list',
    summary: 'the initial access tokens (id, name, created, expiry; never the token itself)',
    options: [],
    needs: [],
    run: async (ctx) => ({
      data: (await listRegistrationTokens(ctx)).map((t) => ({
        id: t.id,
        name: t.label,
        created_at: isoOrNull(t.created_at),
        expires_at: isoOrNull(t.expires_at),
      })),
    }),
  },
  'registration-token revoke': {
    usage: 'registration-token revoke --id ID',
    summary: 'revokes an initial access token: registrations presenting it are refused from then on',
    options: ['id'],
    needs: ['id'],
    run: async (ctx, v) => {
      const id = idOf(v.id!, 'registration token');
      if (!(await revokeRegistrationToken(ctx, id))) throw new UsageError(`no registration token with id ${id}`);
      return { revoked: true, id };
    },
  },
};
