// The admin CLI's commands (src/cli/admin.ts parses the command line and runs one): each names
// its options and calls the same services as the HTTP API.
import type { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { migrateLatest, migrateRollback } from '../db/migrate.ts';
import { sealAllSecrets } from '../db/sealedSecrets.ts';
import { isSigningAlg, KEY_PUBLISHED_AHEAD_MS, rotateSigningKeys, SIGNING_ALGS } from '../open/signingKeys.ts';
import {
  createAccessToken,
  DAY_MS,
  deleteAccessToken,
  listAccessTokens,
  listAccessTokensOfUser,
  MAX_TOKEN_EXPIRY_DAYS,
} from '../accounts/accessTokens.ts';
import {
  addClientSecret,
  clientSecretsOf,
  createApp,
  deleteClientSecret,
  findAppByClientId,
  setPkceRequired,
  updateApp,
  type Application,
} from '../accounts/apps.ts';
import { addMember, createOrg } from '../accounts/orgs.ts';
import { DEMO, seedDemo } from '../accounts/seed.ts';
import { createUser, deleteUser, findUserByLogin, setPassword } from '../accounts/users.ts';
import { isSessionId, listUserSessions, revokeUserSessions, SESSION_ID_LENGTH } from '../accounts/webSessions.ts';
import {
  clientNotFound,
  demoExists,
  demoInProduction,
  lastClientSecret,
  Problem,
  userNotFound,
} from '../shared/errors.ts';
import type { SealerContext } from '../context.ts';
/** Each command: its usage line, what it does (for --help), the options it takes and needs, and its work. */
export interface Command {
  usage: string;
  summary?: string;
  options: Array<keyof Values>;
  needs: Array<keyof Values>;
  /** Checks of the options' values that need no database: a usage error comes before the database is opened. */
  check?: (v: Values) => void;
  run: (ctx: SealerContext, v: Values) => Promise<Output>;
}

export const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  all: { type: 'boolean' },
  id: { type: 'string' },
  'client-id': { type: 'string' },
  login: { type: 'string' },
  password: { type: 'string' },
  name: { type: 'string' },
  'avatar-url': { type: 'string' },
  namespace: { type: 'string' },
  owner: { type: 'string' },
  role: { type: 'string' },
  description: { type: 'string' },
  homepage: { type: 'string' },
  'redirect-uri': { type: 'string' },
  'id-token-alg': { type: 'string' },
  pkce: { type: 'string' },
  alg: { type: 'string' },
  now: { type: 'boolean' },
  user: { type: 'string' },
  'usage-scenario': { type: 'string' },
  permission: { type: 'string', multiple: true },
  'expires-in': { type: 'string' },
  'expires-at': { type: 'string' },
  'even-the-last': { type: 'boolean' },
} as const;

export type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];
export type Output = Record<string, unknown>;

/** Wrong command line: printed with a pointer to --help, exit status 2. */
export class UsageError extends Error {}

/** --pkce: `required` (the default) or `optional` (this confidential client may leave PKCE out). */
function pkceOption(v: Values): boolean | undefined {
  if (v.pkce === undefined) return undefined;
  if (v.pkce !== 'required' && v.pkce !== 'optional')
    throw new UsageError(`--pkce is required or optional, not ${JSON.stringify(v.pkce)}`);
  return v.pkce === 'required';
}

export function required(values: Values, ...names: Array<keyof Values>): void {
  const missing = names.filter((n) => values[n] === undefined);
  if (missing.length) throw new UsageError(`missing ${missing.map((n) => `--${String(n)}`).join(', ')}`);
}

async function userIdOf(ctx: SealerContext, login: string): Promise<number> {
  const user = await findUserByLogin(ctx, login);
  if (!user) throw userNotFound(login);
  return user.id;
}

function idOf(value: string, what: string): number {
  if (!/^[1-9]\d{0,15}$/.test(value)) throw new UsageError(`--id must be the ${what}'s numeric id (got "${value}")`);
  return Number(value);
}

async function appOf(ctx: SealerContext, clientId: string): Promise<Application> {
  const app = await findAppByClientId(ctx, clientId);
  if (!app) throw clientNotFound(clientId);
  return app;
}

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

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export const commands: Record<string, Command> = {
  'user create': {
    usage: 'user create --login LOGIN --password PASSWORD --name NAME [--avatar-url URL]',
    options: ['login', 'password', 'name', 'avatar-url'],
    needs: ['login', 'password', 'name'],
    run: async (ctx, v) => {
      const user = await createUser(ctx, {
        login: v.login!,
        password: v.password!,
        name: v.name!,
        ...(v['avatar-url'] ? { avatarUrl: v['avatar-url'] } : {}),
      });
      return { id: user.id, login: user.login, name: user.name, avatar_url: user.avatar_url };
    },
  },
  'user set-password': {
    usage: 'user set-password --login LOGIN --password PASSWORD',
    summary: 'sets a new password and ends every browser session of the user at once',
    options: ['login', 'password'],
    needs: ['login', 'password'],
    run: async (ctx, v) => {
      const { user, sessionsEnded } = await setPassword(ctx, v.login!, v.password!);
      return { id: user.id, login: user.login, sessions_ended: sessionsEnded };
    },
  },
  'user delete': {
    usage: 'user delete --login LOGIN',
    summary:
      'deletes the user and everything theirs (apps, grants, tokens, workflows, runs); their sessions end at once',
    options: ['login'],
    needs: ['login'],
    run: async (ctx, v) => {
      const user = await deleteUser(ctx, v.login!);
      return { deleted: true, id: user.id, login: user.login };
    },
  },
  'org create': {
    usage: 'org create --namespace NS --name NAME --owner LOGIN',
    options: ['namespace', 'name', 'owner'],
    needs: ['namespace', 'name', 'owner'],
    run: async (ctx, v) => {
      const org = await createOrg(ctx, { namespace: v.namespace!, name: v.name!, ownerLogin: v.owner! });
      return { id: org.id, namespace: org.namespace, name: org.name, owner: v.owner!.toLowerCase() };
    },
  },
  'org add-member': {
    usage: 'org add-member --namespace NS --login LOGIN [--role member|owner]',
    options: ['namespace', 'login', 'role'],
    needs: ['namespace', 'login'],
    run: async (ctx, v) => {
      const m = await addMember(ctx, v.namespace!, v.login!, v.role ?? 'member');
      return {
        org_id: m.org_id,
        user_id: m.user_id,
        namespace: v.namespace!.toLowerCase(),
        login: v.login!.toLowerCase(),
        role: m.role,
      };
    },
  },
  'app create': {
    usage:
      'app create --owner LOGIN --name NAME --description TEXT --homepage URL --redirect-uri URL [--id-token-alg RS256|ES256] [--pkce required|optional]',
    summary:
      'prints client_id and client_secret (shown once); --id-token-alg: how its OpenID Connect ID tokens are signed (id_token_signed_response_alg; RS256 unless given); --pkce optional: let this confidential client leave out PKCE (required unless given)',
    options: ['owner', 'name', 'description', 'homepage', 'redirect-uri', 'id-token-alg', 'pkce'],
    needs: ['owner', 'name', 'description', 'homepage', 'redirect-uri'],
    check: (v) => void pkceOption(v),
    run: async (ctx, v) => {
      const { app, clientSecret } = await createApp(ctx, {
        ownerLogin: v.owner!,
        name: v.name!,
        description: v.description!,
        homepage: v.homepage!,
        redirectUri: v['redirect-uri']!,
        idTokenAlg: v['id-token-alg'],
        pkceRequired: pkceOption(v),
      });
      const { id, client_id, name, redirect_uri, id_token_signed_response_alg } = app;
      return {
        id,
        client_id,
        client_secret: clientSecret,
        name,
        redirect_uri,
        id_token_signed_response_alg,
        pkce_required: Boolean(app.pkce_required),
      };
    },
  },
  'app update': {
    usage:
      'app update --client-id ID [--name NAME] [--description TEXT] [--homepage URL] [--redirect-uri URL] [--id-token-alg RS256|ES256] [--pkce required|optional]',
    summary:
      'changes the given details; the client secret stays; --pkce optional lets this confidential client leave out PKCE (RFC 9700 2.1.1 recommends it of every client)',
    options: ['client-id', 'name', 'description', 'homepage', 'redirect-uri', 'id-token-alg', 'pkce'],
    needs: ['client-id'],
    check: (v) => void pkceOption(v),
    run: async (ctx, v) => {
      const found = await findAppByClientId(ctx, v['client-id']!);
      if (!found) throw clientNotFound(v['client-id']!);
      const details = {
        ...(v.name !== undefined ? { name: v.name } : {}),
        ...(v.description !== undefined ? { description: v.description } : {}),
        ...(v.homepage !== undefined ? { homepage: v.homepage } : {}),
        ...(v['redirect-uri'] !== undefined ? { redirectUri: v['redirect-uri'] } : {}),
        ...(v['id-token-alg'] !== undefined ? { idTokenAlg: v['id-token-alg'] } : {}),
      };
      const pkceRequired = pkceOption(v);
      if (!Object.keys(details).length && pkceRequired === undefined)
        throw new UsageError(
          'nothing to change: give --name, --description, --homepage, --redirect-uri, --id-token-alg or --pkce',
        );
      if (pkceRequired !== undefined) await setPkceRequired(ctx, found.id, pkceRequired);
      const app = {
        ...(await updateApp(ctx, found.owner_user_id, found.id, details)),
        ...(pkceRequired !== undefined ? { pkce_required: pkceRequired } : {}),
      };
      return {
        id: app.id,
        client_id: app.client_id,
        name: app.name,
        description: app.description,
        homepage: app.homepage,
        redirect_uri: app.redirect_uri,
        id_token_signed_response_alg: app.id_token_signed_response_alg,
        pkce_required: Boolean(app.pkce_required),
      };
    },
  },
  'app list-secrets': {
    usage: 'app list-secrets --client-id ID',
    summary: "the app's client secrets (id, created_at, last_used_at; never the secret itself)",
    options: ['client-id'],
    needs: ['client-id'],
    run: async (ctx, v) => {
      const app = await appOf(ctx, v['client-id']!);
      const secrets = await clientSecretsOf(ctx, app);
      return {
        data: secrets.map((s) => ({
          id: s.id,
          created_at: isoOrNull(s.created_at),
          last_used_at: isoOrNull(s.last_used_at),
        })),
      };
    },
  },
  'app generate-secret': {
    usage: 'app generate-secret --client-id ID',
    summary:
      'a second client secret for a rotation (two at most); prints it once. The other keeps working until app delete-secret',
    options: ['client-id'],
    needs: ['client-id'],
    run: async (ctx, v) => {
      const app = await appOf(ctx, v['client-id']!);
      const { clientSecret, secretId, secretCount } = await addClientSecret(ctx, app.owner_user_id, app.id);
      return { client_id: app.client_id, id: secretId, client_secret: clientSecret, secrets: secretCount };
    },
  },
  'app delete-secret': {
    usage: 'app delete-secret --client-id ID --id SECRET_ID [--even-the-last]',
    summary:
      'deletes one client secret (an id from app list-secrets): clients presenting it are refused at once. The last one goes only with --even-the-last',
    options: ['client-id', 'id', 'even-the-last'],
    needs: ['client-id', 'id'],
    run: async (ctx, v) => {
      const id = idOf(v.id!, 'client secret');
      const app = await appOf(ctx, v['client-id']!);
      try {
        const secretsLeft = await deleteClientSecret(ctx, app.owner_user_id, app.id, id, {
          evenTheLast: v['even-the-last'] ?? false,
        });
        return { deleted: true, client_id: app.client_id, id, secrets_left: secretsLeft };
      } catch (err) {
        // The service refuses the last secret in the console's words (a confirmation); here it takes a flag.
        if (!(err instanceof Problem) || err.code !== 'last_client_secret') throw err;
        throw lastClientSecret(app.name, 'Run app generate-secret first, or give --even-the-last to delete it anyway.');
      }
    },
  },
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
  'demo seed': {
    usage: 'demo seed',
    summary:
      'creates the demo user, organization, app and API key and prints their secrets (not in production; `npm start` does it by itself in development)',
    options: [],
    needs: [],
    run: async (ctx) => {
      const config = loadConfig();
      if (config.NODE_ENV === 'production') throw demoInProduction();
      const seed = await seedDemo({ db: ctx.db, config, now: Date.now });
      if (!seed) throw demoExists(DEMO.login);
      return {
        login: seed.user.login,
        password: seed.user.password,
        organization: seed.org.namespace,
        client_id: seed.app.client_id,
        client_secret: seed.app.client_secret,
        redirect_uri: seed.app.redirect_uri,
        api_key: seed.apiKey.token,
        api_key_namespace: seed.apiKey.namespace,
        workflows: seed.workflows.map((w) => w.name),
      };
    },
  },
  // Prints key ids only: a private key never leaves src/open/signingKeys.ts.
  'keys rotate': {
    usage: 'keys rotate [--alg RS256|ES256] [--now]',
    summary: `new signing keys (ES256: proxy tokens and ES256 ID tokens; RS256: other ID tokens), published at once and signing ${KEY_PUBLISHED_AHEAD_MS / 60_000} minutes later (active_from), when the keys they replace retire (still published and verifying until their tokens expire); --alg: one algorithm only; --now: sign with them at once (a leaked key)`,
    options: ['alg', 'now'],
    needs: [],
    check: (v) => {
      if (v.alg !== undefined && !isSigningAlg(v.alg))
        throw new UsageError(`--alg must be ${SIGNING_ALGS.join(' or ')} (got "${v.alg}")`);
    },
    run: async (ctx, v) => {
      const algs = v.alg !== undefined && isSigningAlg(v.alg) ? [v.alg] : SIGNING_ALGS;
      const rotated = (await rotateSigningKeys(ctx, algs, { immediately: v.now ?? false })).map((r) => ({
        alg: r.alg,
        kid: r.kid,
        active_from: new Date(r.activeFrom).toISOString(),
        retired: r.retired,
      }));
      // `kid` and `retired` as this command printed them before RS256 keys: the ES256 (proxy-token) key's.
      const es256 = rotated.find((r) => r.alg === 'ES256');
      return { rotated, ...(es256 ? { kid: es256.kid, retired: es256.retired } : {}) };
    },
  },
  // Prints counts and the key's one-way id only.
  'secrets reseal': {
    usage: 'secrets reseal',
    summary:
      'seals every stored secret with SECRETS_KEY (after a key-encryption key rotation: the old key in SECRETS_KEY_PREVIOUS until this has run)',
    options: [],
    needs: [],
    run: async ({ db, sealer }) => ({ key_id: sealer.currentKeyId, ...(await sealAllSecrets(db, sealer)) }),
  },
  migrate: {
    usage: 'migrate',
    summary: 'applies pending migrations',
    options: [],
    needs: [],
    run: async ({ db, sealer }) => ({ applied: await migrateLatest(db, { sealer }) }),
  },
  'migrate rollback': {
    usage: 'migrate rollback [--all]',
    summary: 'rolls back the last batch (or every migration)',
    options: ['all'],
    needs: [],
    run: async ({ db, sealer }, v) => ({ rolled_back: await migrateRollback(db, { all: v.all ?? false, sealer }) }),
  },
};

export const groups = [...new Set(Object.keys(commands).map((name) => name.split(' ')[0]!))];
