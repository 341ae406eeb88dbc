import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';
import { prepared } from '../db/prepared.ts';
import { usableNamespaces } from './namespaces.ts';

export interface AccessTokenRow {
  id: number;
  user_id: number;
  namespace: string;
  name: string;
  usage_scenario: 'paid' | 'trial';
  /** JSON array text, e.g. '["workflows"]'. */
  permissions: string;
  /** SHA-256 hex of the raw token; the token itself is never stored. */
  token_hash: string;
  token_prefix: string;
  created_at: number;
  last_used_at: number | null;
  /** When it stops working; null: never. */
  expires_at: number | null;
}

export async function insertAccessToken(db: Knex, row: Omit<AccessTokenRow, 'id'>): Promise<number> {
  return insertReturningId(db, 'access_tokens', row);
}

export async function listAccessTokenRows(db: Knex, userId: number, namespace: string): Promise<AccessTokenRow[]> {
  return db<AccessTokenRow>('access_tokens').where({ user_id: userId, namespace }).orderBy('id');
}

export async function listAccessTokenRowsOfUser(db: Knex, userId: number): Promise<AccessTokenRow[]> {
  return db<AccessTokenRow>('access_tokens').where({ user_id: userId }).orderBy('id');
}

/**
 * A presented raw token its owner may still use: in their own namespace, or in an org they are
 * still a member of (leaving an org stops that org's tokens of theirs at once). Every API-key
 * request runs it.
 */
export async function findUsableAccessTokenRowByHash(db: Knex, tokenHash: string): Promise<AccessTokenRow | undefined> {
  return usableAccessTokenRowByHash.first(db, { tokenHash });
}

const usableAccessTokenRowByHash = prepared<{ tokenHash: string }, AccessTokenRow>(
  'usable_access_token_by_hash',
  (db, param) =>
    usableNamespaces(
      db('access_tokens as t')
        .join('namespaces as n', 'n.name', 't.namespace')
        .where('t.token_hash', param('tokenHash')),
      db.ref('t.user_id'),
    ).first('t.*'),
);

export async function touchAccessTokenRow(db: Knex, id: number, now: number): Promise<void> {
  await db('access_tokens').where({ id }).update({ last_used_at: now });
}

export async function deleteAccessTokenRow(db: Knex, userId: number, id: number): Promise<number> {
  return db('access_tokens').where({ id, user_id: userId }).delete();
}

/** Deletes a user's access tokens in one namespace (the user left that organization). */
export async function deleteAccessTokenRowsInNamespace(db: Knex, userId: number, namespace: string): Promise<number> {
  return db('access_tokens').where({ user_id: userId, namespace }).delete();
}
