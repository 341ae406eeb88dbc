import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

// The operator's initial access tokens for client registration (RFC 7591 3), migration 0038:
// SHA-256 hashes, an optional expiry; revoking one deletes its row.

export interface RegistrationTokenRow {
  id: number;
  token_hash: string;
  label: string;
  created_at: number;
  expires_at: number | null;
}

function row(r: RegistrationTokenRow): RegistrationTokenRow {
  return {
    ...r,
    id: Number(r.id),
    created_at: Number(r.created_at),
    expires_at: r.expires_at === null ? null : Number(r.expires_at),
  };
}

export async function insertRegistrationToken(db: Knex, fields: Omit<RegistrationTokenRow, 'id'>): Promise<number> {
  return insertReturningId(db, 'client_registration_tokens', fields);
}

/** The live token with this hash (looked up by its unique hash, an index lookup on a SHA-256 of a random token). */
export async function findLiveRegistrationToken(
  db: Knex,
  tokenHash: string,
  now: number,
): Promise<RegistrationTokenRow | undefined> {
  const found = await db<RegistrationTokenRow>('client_registration_tokens')
    .where({ token_hash: tokenHash })
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .first();
  return found ? row(found) : undefined;
}

export async function listRegistrationTokenRows(db: Knex): Promise<RegistrationTokenRow[]> {
  return (await db<RegistrationTokenRow>('client_registration_tokens').orderBy('id')).map(row);
}

export async function deleteRegistrationTokenRow(db: Knex, id: number): Promise<number> {
  return db('client_registration_tokens').where({ id }).delete();
}
