import type { Knex } from 'knex';
import type { UsageScenario } from '../accounts/accessTokens.ts';
import { prepared } from '../db/prepared.ts';
import { usableNamespaces } from '../accounts/namespaces.ts';

// The open interfaces' SQL, named by intent. Each function is one round trip on primary keys.

export interface TokenForIssuance {
  id: number;
  name: string;
  namespace: string;
  usageScenario: UsageScenario;
  /** False when the app's authorization was revoked (or is not the user's). */
  authorizationStands: boolean;
  /** When the raw token expires; null: never. */
  expiresAt: number | null;
}

/**
 * The user's raw access token `id` in `namespace` (which must be the user's login or an org the user
 * belongs to), and, read in the same statement, whether the authorization `authorizationId` still
 * stands. Undefined when the token is not found there: a foreign id or namespace.
 */
export async function findTokenForIssuance(
  db: Knex,
  q: { userId: number; namespace: string; id: number; authorizationId: number },
): Promise<TokenForIssuance | undefined> {
  const row = await tokenForIssuance.first(db, q);
  if (!row) return undefined;
  return {
    id: Number(row.id),
    name: String(row.name),
    namespace: String(row.namespace),
    usageScenario: row.usage_scenario as UsageScenario,
    authorizationStands: row.authorization_id !== null && row.authorization_id !== undefined,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

const tokenForIssuance = prepared<{ userId: number; namespace: string; id: number; authorizationId: number }>(
  'token_for_issuance',
  (db, param) =>
    usableNamespaces(
      db('access_tokens as t')
        .join('namespaces as n', 'n.name', 't.namespace')
        .leftJoin('authorizations as z', function joinAuthorization() {
          this.on('z.id', '=', db.raw('?', [param('authorizationId')]))
            .andOn('z.user_id', '=', 't.user_id')
            .andOnNull('z.revoked_at');
        })
        .where({ 't.id': param('id'), 't.user_id': param('userId'), 't.namespace': param('namespace') }),
      db.raw('?', [param('userId')]),
    ).first('t.id', 't.name', 't.namespace', 't.usage_scenario', 't.expires_at', 'z.id as authorization_id'),
);

export interface StandingGrant {
  namespace: string;
  usageScenario: UsageScenario;
  lastUsedAt: number | null;
  /** When the raw token expires; null: never. */
  expiresAt: number | null;
}

/**
 * The gateway's per-call check of a proxy token: its authorization is not revoked, nor the token
 * chain it was minted through (when its claims name one), and its raw access token still exists,
 * both the user's. One statement, primary-key lookups.
 */
export async function findStandingGrant(
  db: Knex,
  q: { userId: number; authorizationId: number; accessTokenId: number; chainId?: number | undefined },
): Promise<StandingGrant | undefined> {
  // No chain (a token minted before chains were claimed): 0 names no code.
  const row = await standingGrant.first(db, {
    userId: q.userId,
    authorizationId: q.authorizationId,
    accessTokenId: q.accessTokenId,
    chainId: q.chainId ?? 0,
  });
  if (!row) return undefined;
  return {
    namespace: String(row.namespace),
    usageScenario: row.usage_scenario as UsageScenario,
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

const standingGrant = prepared<{ userId: number; authorizationId: number; accessTokenId: number; chainId: number }>(
  'standing_grant',
  (db, param) =>
    // The user may still use the token's namespace: their own, or an org they are still in.
    usableNamespaces(
      db('authorizations as z')
        .join('access_tokens as t', function joinToken() {
          this.on('t.id', '=', db.raw('?', [param('accessTokenId')])).andOn('t.user_id', '=', 'z.user_id');
        })
        .join('namespaces as n', 'n.name', 't.namespace')
        .where({ 'z.id': param('authorizationId'), 'z.user_id': param('userId') })
        .whereNull('z.revoked_at')
        .whereNotExists(
          db('oauth_codes as c').where('c.id', param('chainId')).whereNotNull('c.chain_revoked_at').select('c.id'),
        ),
      db.ref('z.user_id'),
    ).first('t.namespace', 't.usage_scenario', 't.last_used_at', 't.expires_at'),
);
