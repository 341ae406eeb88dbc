import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

export interface UserRow {
  id: number;
  login: string;
  name: string;
  avatar_url: string;
  password_hash: string;
  created_at: number;
}

export async function insertUser(db: Knex, row: Omit<UserRow, 'id'>): Promise<number> {
  return insertReturningId(db, 'users', row);
}

export async function findUserRowByLogin(db: Knex, login: string): Promise<UserRow | undefined> {
  return db<UserRow>('users').where({ login }).first();
}

export async function findUserRowById(db: Knex, id: number): Promise<UserRow | undefined> {
  return db<UserRow>('users').where({ id }).first();
}

export async function anyUserRow(db: Knex): Promise<boolean> {
  return (await db('users').first('id')) !== undefined;
}

export async function updatePasswordHash(db: Knex, id: number, passwordHash: string): Promise<void> {
  await db('users').where({ id }).update({ password_hash: passwordHash });
}

/** Replaces a hash with a stronger one of the same password, unless the password changed meanwhile. */
export async function upgradePasswordHash(db: Knex, id: number, oldHash: string, newHash: string): Promise<void> {
  await db('users').where({ id, password_hash: oldHash }).update({ password_hash: newHash });
}

/** Organizations (namespace) where the user is the only owner. */
export async function findOrgsOnlyOwnedBy(db: Knex, userId: number): Promise<string[]> {
  const rows = (await db('memberships as m')
    .join('organizations as o', 'o.id', 'm.org_id')
    .where({ 'm.user_id': userId, 'm.role': 'owner' })
    .whereNotExists((q) =>
      q
        .select(db.raw('1'))
        .from('memberships as other')
        .whereRaw('other.org_id = m.org_id')
        .where('other.role', 'owner')
        .whereNot('other.user_id', userId),
    )
    .select('o.namespace')
    .orderBy('o.namespace')) as Array<{ namespace: string }>;
  return rows.map((r) => r.namespace);
}

/** Deletes the user; the schema cascades to everything the user owns or was issued. */
export async function deleteUserRow(db: Knex, id: number): Promise<number> {
  return db('users').where({ id }).delete();
}
