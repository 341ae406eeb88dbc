import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

// Pushed authorization requests (RFC 9126, migration 0036): stored under the hash of their
// request_uri's random part, used once.

export interface PushedRequestRow {
  id: number;
  request_hash: string;
  application_id: number;
  /** The request's parameters, JSON. */
  params: string;
  expires_at: number;
  /** When a browser first brought it to /oauth/authorize. */
  opened_at: number | null;
  used_at: number | null;
  created_at: number;
}

const TABLE = 'oauth_pushed_requests';

export async function insertPushedRequest(
  db: Knex,
  row: Omit<PushedRequestRow, 'id' | 'used_at' | 'opened_at'>,
): Promise<number> {
  return insertReturningId(db, TABLE, { ...row, opened_at: null, used_at: null });
}

/** Drops the client's requests whose every use has ended before `before`. */
export async function deleteExpiredPushedRequests(db: Knex, applicationId: number, before: number): Promise<void> {
  await db(TABLE).where({ application_id: applicationId }).where('expires_at', '<', before).delete();
}

const asNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));

export async function findPushedRequestByHash(db: Knex, requestHash: string): Promise<PushedRequestRow | undefined> {
  const row = await db<PushedRequestRow>(TABLE).where({ request_hash: requestHash }).first();
  return row
    ? {
        ...row,
        id: Number(row.id),
        application_id: Number(row.application_id),
        expires_at: Number(row.expires_at),
        created_at: Number(row.created_at),
        opened_at: asNumber(row.opened_at),
        used_at: asNumber(row.used_at),
      }
    : undefined;
}

/**
 * The first arrival at /oauth/authorize, before the request's expiry: from then on it lasts until
 * `until` (the user logs in and decides). False when it was opened already or has expired.
 */
export async function markPushedRequestOpened(db: Knex, id: number, now: number, until: number): Promise<boolean> {
  const changed = await db(TABLE)
    .where({ id })
    .whereNull('opened_at')
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ opened_at: now, expires_at: until });
  return changed === 1;
}

/**
 * Marks the request used unless it was used already or has expired: true for the one caller that
 * did (one conditional UPDATE, so two concurrent decisions cannot both take it).
 */
export async function markPushedRequestUsed(db: Knex, id: number, now: number): Promise<boolean> {
  const changed = await db(TABLE)
    .where({ id })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now });
  return changed === 1;
}
