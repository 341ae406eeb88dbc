import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

export interface ApplicationRow {
  id: number;
  client_id: string;
  /** SHA-256 hex of the client secret; the secret itself is never stored. */
  client_secret_hash: string;
  owner_user_id: number;
  name: string;
  description: string;
  homepage: string;
  redirect_uri: string;
  created_at: number;
  secret_rotated_at: number | null;
}

export async function insertApp(db: Knex, row: Omit<ApplicationRow, 'id'>): Promise<number> {
  return insertReturningId(db, 'applications', row);
}

export async function findAppRowByClientId(db: Knex, clientId: string): Promise<ApplicationRow | undefined> {
  return db<ApplicationRow>('applications').where({ client_id: clientId }).first();
}

export async function findAppRowOfOwner(db: Knex, ownerUserId: number, id: number): Promise<ApplicationRow | undefined> {
  return db<ApplicationRow>('applications').where({ id, owner_user_id: ownerUserId }).first();
}

export async function listAppRowsOfOwner(db: Knex, ownerUserId: number): Promise<ApplicationRow[]> {
  return db<ApplicationRow>('applications').where({ owner_user_id: ownerUserId }).orderBy('id');
}

export async function replaceSecretHash(db: Knex, id: number, secretHash: string, now: number): Promise<void> {
  await db('applications').where({ id }).update({ client_secret_hash: secretHash, secret_rotated_at: now });
}

export async function updateAppDetails(
  db: Knex,
  id: number,
  fields: Partial<Pick<ApplicationRow, 'name' | 'description' | 'homepage' | 'redirect_uri'>>,
): Promise<void> {
  await db('applications').where({ id }).update(fields);
}

/** Deletes the app; the schema cascades to its authorizations, codes and OAuth tokens. */
export async function deleteAppRow(db: Knex, id: number): Promise<number> {
  return db('applications').where({ id }).delete();
}
