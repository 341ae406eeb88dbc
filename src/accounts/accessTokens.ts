import type { Knex } from 'knex';
import type { DbContext } from '../context.ts';
import { hashToken, newToken } from '../shared/crypto.ts';
import { accessTokenNotFound, invalidField, namespaceNotFound, userNotFound } from '../shared/errors.ts';
import { revocationLease } from '../shared/principalLease.ts';
import {
  deleteAccessTokenRow,
  findUsableAccessTokenRowByHash,
  insertAccessToken,
  listAccessTokenRows,
  listAccessTokenRowsOfUser,
  touchAccessTokenRow,
  type AccessTokenRow,
} from './accessTokens.store.ts';
import { namespaceUsableBy } from './namespaces.store.ts';
import { findUserRowByLogin } from './users.store.ts';
import { canonicalName, checkText } from './validate.ts';

/** Raw access tokens (API keys) start with this prefix, so leaked ones are scannable. */
export const ACCESS_TOKEN_PREFIX = 'sk';
export const USAGE_SCENARIOS = ['paid', 'trial'] as const;
export type UsageScenario = (typeof USAGE_SCENARIOS)[number];
/** What a raw access token may be granted; `workflows` opens the workflows API. */
export const ACCESS_TOKEN_PERMISSIONS = ['workflows'] as const;
export type AccessTokenPermission = (typeof ACCESS_TOKEN_PERMISSIONS)[number];

/** A raw access token's metadata; never the token or its hash. */
export interface AccessToken {
  id: number;
  user_id: number;
  namespace: string;
  name: string;
  usage_scenario: UsageScenario;
  permissions: string[];
  /** The token's first characters, to tell tokens apart in lists. */
  token_prefix: string;
  created_at: number;
  last_used_at: number | null;
  /** When it stops working (epoch ms); null: never. */
  expires_at: number | null;
}

/** The expiries the settings form offers, in days (as GitHub's personal access tokens); none: never. */
export const TOKEN_EXPIRY_DAYS = [7, 30, 60, 90, 365] as const;

/** Whether the token has expired (at `now`). */
export const isExpired = (token: Pick<AccessToken, 'expires_at'>, now = Date.now()): boolean =>
  token.expires_at !== null && token.expires_at <= now;

/** The list item of `GET /api/open/v1/{namespace}/tokens` (SEED-SPEC 2.4). */
export interface AccessTokenListItem {
  id: number;
  name: string;
  usage_scenario: UsageScenario;
}

export interface NewAccessToken {
  userId?: number;
  userLogin?: string;
  namespace: string;
  name: string;
  usageScenario: string;
  permissions?: string[];
  /** Days until it expires; absent: never. */
  expiresInDays?: number | undefined;
  /** Or the moment it expires (epoch ms, within 366 days), as the admin CLI's --expires-at. */
  expiresAt?: number | undefined;
}

function toAccessToken(row: AccessTokenRow): AccessToken {
  return {
    id: row.id,
    user_id: row.user_id,
    namespace: row.namespace,
    name: row.name,
    usage_scenario: row.usage_scenario,
    permissions: JSON.parse(row.permissions) as string[],
    token_prefix: row.token_prefix,
    created_at: Number(row.created_at),
    last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
    expires_at: row.expires_at === null || row.expires_at === undefined ? null : Number(row.expires_at),
  };
}

/** A day in milliseconds. */
export const DAY_MS = 86_400_000;
/** An access token lives at most this many days (the console's form and the admin CLI alike). */
export const MAX_TOKEN_EXPIRY_DAYS = 366;

function checkExpiry(days: number | undefined, at: number | undefined, now: number): number | null {
  if (at !== undefined) {
    if (days !== undefined)
      throw invalidField('Give expires_in_days or expires_at, not both.', '/expires_at', 'not with expires_in_days');
    if (!Number.isSafeInteger(at) || at <= now || at > now + MAX_TOKEN_EXPIRY_DAYS * DAY_MS) {
      throw invalidField(
        `expires_at must be in the future, at most ${MAX_TOKEN_EXPIRY_DAYS} days away.`,
        '/expires_at',
        `must be in the next ${MAX_TOKEN_EXPIRY_DAYS} days`,
      );
    }
    return at;
  }
  if (days === undefined) return null;
  if (!Number.isInteger(days) || days < 1 || days > MAX_TOKEN_EXPIRY_DAYS) {
    throw invalidField(
      `expires_in_days must be a whole number of days from 1 to ${MAX_TOKEN_EXPIRY_DAYS}.`,
      '/expires_in_days',
      `must be 1 to ${MAX_TOKEN_EXPIRY_DAYS} days, or no expiry`,
    );
  }
  return now + days * DAY_MS;
}

function checkUsageScenario(value: string): UsageScenario {
  if (!(USAGE_SCENARIOS as readonly string[]).includes(value)) {
    throw invalidField(
      `usage_scenario must be paid or trial (got "${value}").`,
      '/usage_scenario',
      'must be paid or trial',
    );
  }
  return value as UsageScenario;
}

function checkPermissions(values: string[]): AccessTokenPermission[] {
  const unknown = values.filter((p) => !(ACCESS_TOKEN_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length) {
    throw invalidField(
      `Unknown permission ${unknown.map((p) => `"${p}"`).join(', ')}; known: ${ACCESS_TOKEN_PERMISSIONS.join(', ')}.`,
      '/permissions',
      `must be among ${ACCESS_TOKEN_PERMISSIONS.join(', ')}`,
    );
  }
  return [...new Set(values)] as AccessTokenPermission[];
}

async function resolveUserId(db: Knex, input: Pick<NewAccessToken, 'userId' | 'userLogin'>): Promise<number> {
  if (input.userId !== undefined) return input.userId;
  const user = input.userLogin ? await findUserRowByLogin(db, canonicalName(input.userLogin)) : undefined;
  if (!user) throw userNotFound(input.userLogin ?? '');
  return user.id;
}

/** 404, not 403: a namespace the user cannot use is indistinguishable from one that does not exist. */
async function requireUsableNamespace(db: Knex, userId: number, namespace: string): Promise<string> {
  const name = canonicalName(namespace);
  if (!(await namespaceUsableBy(db, userId, name))) throw namespaceNotFound(namespace);
  return name;
}

/** Creates a raw access token in a namespace the user can use. The plaintext `token` is returned once; only its hash is stored. */
export async function createAccessToken(
  ctx: DbContext,
  input: NewAccessToken,
): Promise<{ token: string; record: AccessToken }> {
  const name = checkText('name', input.name, { max: 255 });
  const usageScenario = checkUsageScenario(input.usageScenario);
  const permissions = checkPermissions(input.permissions ?? []);
  const userId = await resolveUserId(ctx.db, input);
  const namespace = await requireUsableNamespace(ctx.db, userId, input.namespace);
  const now = Date.now();
  const expiresAt = checkExpiry(input.expiresInDays, input.expiresAt, now);

  const token = newToken(ACCESS_TOKEN_PREFIX);
  const row = {
    user_id: userId,
    namespace,
    name,
    usage_scenario: usageScenario,
    permissions: JSON.stringify(permissions),
    token_hash: hashToken(token),
    token_prefix: token.slice(0, 10),
    created_at: now,
    last_used_at: null,
    expires_at: expiresAt,
  };
  const id = await insertAccessToken(ctx.db, row);
  return { token, record: toAccessToken({ id, ...row }) };
}

/** The user's tokens in a namespace (SEED-SPEC 4.4); 404 when the namespace is not the user's. */
export async function listAccessTokens(
  ctx: DbContext,
  userId: number,
  namespace: string,
): Promise<AccessTokenListItem[]> {
  const name = await requireUsableNamespace(ctx.db, userId, namespace);
  const rows = await listAccessTokenRows(ctx.db, userId, name);
  return rows.map((r) => ({ id: r.id, name: r.name, usage_scenario: r.usage_scenario }));
}

/** Every token of the user across namespaces (settings page). */
export async function listAccessTokensOfUser(ctx: DbContext, userId: number): Promise<AccessToken[]> {
  return (await listAccessTokenRowsOfUser(ctx.db, userId)).map(toAccessToken);
}

/** A presented raw token, if it has not expired and its owner may still use its namespace (see findUsableAccessTokenRowByHash). */
export async function findUsableAccessTokenByPlaintext(
  ctx: DbContext,
  token: string,
): Promise<AccessToken | undefined> {
  const row = await findUsableAccessTokenRowByHash(ctx.db, hashToken(token));
  const record = row && toAccessToken(row);
  return record && !isExpired(record) ? record : undefined;
}

/** Records a use of the token (shown in the settings page). */
export async function markAccessTokenUsed(ctx: DbContext, id: number, now = Date.now()): Promise<void> {
  await touchAccessTokenRow(ctx.db, id, now);
}

/** Deletes one of the user's tokens; answers once no process honours it, nor the proxy tokens minted from it. */
export async function deleteAccessToken(ctx: DbContext, userId: number, id: number): Promise<void> {
  if ((await deleteAccessTokenRow(ctx.db, userId, id)) === 0) throw accessTokenNotFound(id);
  await revocationLease.settle();
}
