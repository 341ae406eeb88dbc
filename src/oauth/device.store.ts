import type { Knex } from 'knex';

// The device authorization grant's SQL (RFC 8628; migration 0034). Times are epoch milliseconds.
// Every change of state is a conditional update, so concurrent decisions and polls race safely.

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'used';

export interface NewDeviceAuthorization {
  deviceCodeHash: string;
  userCodeHash: string;
  applicationId: number;
  scope: string;
  intervalS: number;
  expiresAt: number;
  createdAt: number;
  /** RFC 8707: the resources the request named (space separated), or null. */
  resources: string | null;
}

export async function insertDeviceAuthorization(db: Knex, row: NewDeviceAuthorization): Promise<void> {
  await db('device_authorizations').insert({
    device_code_hash: row.deviceCodeHash,
    user_code_hash: row.userCodeHash,
    application_id: row.applicationId,
    scope: row.scope,
    status: 'pending',
    interval_s: row.intervalS,
    expires_at: row.expiresAt,
    created_at: row.createdAt,
    resources: row.resources,
  });
}

export interface DeviceRow {
  id: number;
  applicationId: number;
  clientId: string;
  idTokenAlg: string;
  scope: string;
  status: DeviceStatus;
  userId: number | null;
  authTime: number | null;
  intervalS: number;
  lastPolledAt: number | null;
  expiresAt: number;
  resources: string | null;
}

const COLUMNS = [
  'd.id',
  'd.application_id',
  'a.client_id',
  'a.id_token_signed_response_alg',
  'd.scope',
  'd.status',
  'd.user_id',
  'd.auth_time',
  'd.interval_s',
  'd.last_polled_at',
  'd.expires_at',
  'd.resources',
];

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function toRow(r: Record<string, unknown>): DeviceRow {
  return {
    id: Number(r.id),
    applicationId: Number(r.application_id),
    clientId: String(r.client_id),
    idTokenAlg: String(r.id_token_signed_response_alg),
    scope: String(r.scope),
    status: String(r.status) as DeviceStatus,
    userId: num(r.user_id),
    authTime: num(r.auth_time),
    intervalS: Number(r.interval_s),
    lastPolledAt: num(r.last_polled_at),
    expiresAt: Number(r.expires_at),
    resources: r.resources === null || r.resources === undefined ? null : String(r.resources),
  };
}

const withApplication = (db: Knex) =>
  db('device_authorizations as d').join('applications as a', 'a.id', 'd.application_id').select(COLUMNS);

export async function findByDeviceCodeHash(db: Knex, deviceCodeHash: string): Promise<DeviceRow | null> {
  const row = (await withApplication(db).where('d.device_code_hash', deviceCodeHash).first()) as
    Record<string, unknown> | undefined;
  return row ? toRow(row) : null;
}

/** The live request a user code names: pending and unexpired (an expired row may share its code). */
export async function findPendingByUserCodeHash(
  db: Knex,
  userCodeHash: string,
  now: number,
): Promise<DeviceRow | null> {
  const row = (await withApplication(db)
    .where({ 'd.user_code_hash': userCodeHash, 'd.status': 'pending' })
    .where('d.expires_at', '>', now)
    .orderBy('d.id', 'desc')
    .first()) as Record<string, unknown> | undefined;
  return row ? toRow(row) : null;
}

/** The user's decision: pending -> approved | denied, once; false when it was no longer pending or has expired. */
export async function decideDeviceAuthorization(
  db: Knex,
  id: number,
  decision: { approved: boolean; userId: number; authTime: number },
  now: number,
): Promise<boolean> {
  const changed = await db('device_authorizations')
    .where({ id, status: 'pending' })
    .where('expires_at', '>', now)
    .update({
      status: decision.approved ? 'approved' : 'denied',
      user_id: decision.userId,
      auth_time: decision.authTime,
    });
  return changed === 1;
}

/** A poll of a pending request: when it came and the interval from now on (raised on slow_down). */
export async function recordPoll(db: Knex, id: number, now: number, intervalS: number): Promise<void> {
  await db('device_authorizations').where({ id }).update({ last_polled_at: now, interval_s: intervalS });
}

/** The one redemption: approved -> used; false for every concurrent poll but the first. */
export async function markDeviceCodeUsed(db: Knex, id: number): Promise<boolean> {
  return (await db('device_authorizations').where({ id, status: 'approved' }).update({ status: 'used' })) === 1;
}

/** Expired requests, a day after their end (their user codes may then be dealt again). */
export async function deleteExpiredDeviceAuthorizations(db: Knex, before: number): Promise<void> {
  await db('device_authorizations').where('expires_at', '<', before).del();
}
