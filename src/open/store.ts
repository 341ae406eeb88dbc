import type { Knex } from 'knex';
import type { UsageScenario } from '../platform/accessTokens.ts';

// The open interfaces' SQL, named by intent. Each function is one round trip on primary keys.

export interface TokenForIssuance {
  id: number;
  name: string;
  namespace: string;
  usageScenario: UsageScenario;
  /** False when the app's authorization was revoked (or is not the user's). */
  authorizationStands: boolean;
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
  const row = await db('access_tokens as t')
    .join('namespaces as n', 'n.name', 't.namespace')
    .leftJoin('memberships as m', function joinMembership() {
      this.on('m.org_id', '=', 'n.org_id').andOn('m.user_id', '=', db.raw('?', [q.userId]));
    })
    .leftJoin('authorizations as z', function joinAuthorization() {
      this.on('z.id', '=', db.raw('?', [q.authorizationId])).andOn('z.user_id', '=', 't.user_id').andOnNull('z.revoked_at');
    })
    .where({ 't.id': q.id, 't.user_id': q.userId, 't.namespace': q.namespace })
    .andWhere((w) => w.where('n.user_id', q.userId).orWhereNotNull('m.user_id'))
    .first('t.id', 't.name', 't.namespace', 't.usage_scenario', 'z.id as authorization_id');
  if (!row) return undefined;
  return {
    id: Number(row.id),
    name: row.name,
    namespace: row.namespace,
    usageScenario: row.usage_scenario,
    authorizationStands: row.authorization_id !== null && row.authorization_id !== undefined,
  };
}

export interface StandingGrant {
  namespace: string;
  usageScenario: UsageScenario;
  lastUsedAt: number | null;
}

/**
 * The gateway's per-call check of a proxy token: its authorization is not revoked and its raw
 * access token still exists, both the user's. One statement, two primary-key lookups.
 */
export async function findStandingGrant(
  db: Knex,
  q: { userId: number; authorizationId: number; accessTokenId: number },
): Promise<StandingGrant | undefined> {
  const row = await db('authorizations as z')
    .join('access_tokens as t', function joinToken() {
      this.on('t.id', '=', db.raw('?', [q.accessTokenId])).andOn('t.user_id', '=', 'z.user_id');
    })
    .where({ 'z.id': q.authorizationId, 'z.user_id': q.userId })
    .whereNull('z.revoked_at')
    .first('t.namespace', 't.usage_scenario', 't.last_used_at');
  if (!row) return undefined;
  return { namespace: row.namespace, usageScenario: row.usage_scenario, lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at) };
}
