import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

export interface ApplicationRow {
  id: number;
  client_id: string;
  /** Null for a client that registered itself (RFC 7591, migration 0038). */
  owner_user_id: number | null;
  name: string;
  description: string;
  homepage: string;
  redirect_uri: string;
  created_at: number;
  /** OpenID Connect: how its ID tokens are signed, `RS256` (the default) or `ES256` (migration 0021). */
  id_token_signed_response_alg: string;
  /** The authorize endpoint requires PKCE of it (migration 0024); an operator may opt it out. MySQL reads 1/0. */
  pkce_required: boolean | number;
  /** The authorize endpoint takes only pushed requests (RFC 9126 6, migration 0036); false unless set. MySQL reads 1/0. */
  require_pushed_authorization_requests?: boolean | number;
  /** The registration form's one-time nonce: a resubmitted form finds this app instead of making another. */
  creation_nonce?: string | null;
  /** `client_secret_basic` (the default), `client_secret_post`, or `none`: a public client, without secrets (migration 0038). */
  token_endpoint_auth_method?: string;
  /** `console` (a user's or the operator's), `dynamic` (RFC 7591) or `metadata_document` (migration 0038). */
  registration_kind?: string;
  /** JSON array of every registered redirect URI; null: `redirect_uri` alone. */
  redirect_uris?: string | null;
  /** JSON object of the other registered metadata of a dynamic client (client_uri, contacts, scope...). */
  client_metadata?: string | null;
  /** SHA-256 hex of a dynamic client's registration access token (RFC 7592). */
  registration_access_token_hash?: string | null;
  /** When a token was last issued to it (ms), written at most once an hour; null: never. */
  last_used_at?: number | string | null;
}

/** One of an app's client secrets (at most two: the current one and, during a rotation, the next). */
export interface ClientSecretRow {
  id: number;
  application_id: number;
  /** SHA-256 hex of the client secret; the secret itself is never stored. */
  secret_hash: string;
  created_at: number;
  last_used_at: number | null;
}

/** Inserts the app with its first client secret (none for a public client: `secretHash` null). */
export async function insertApp(db: Knex, row: Omit<ApplicationRow, 'id'>, secretHash: string | null): Promise<number> {
  return db.transaction(async (trx) => {
    const id = await insertReturningId(trx, 'applications', row);
    if (secretHash !== null) await insertClientSecret(trx, id, secretHash, row.created_at);
    return id;
  });
}

export async function findAppRowByNonce(
  db: Knex,
  ownerUserId: number,
  nonce: string,
): Promise<ApplicationRow | undefined> {
  return db<ApplicationRow>('applications').where({ owner_user_id: ownerUserId, creation_nonce: nonce }).first();
}

export async function insertClientSecret(
  db: Knex | Knex.Transaction,
  applicationId: number,
  secretHash: string,
  now: number,
): Promise<number> {
  return insertReturningId(db, 'client_secrets', {
    application_id: applicationId,
    secret_hash: secretHash,
    created_at: now,
    last_used_at: null,
  });
}

export async function listClientSecretRows(db: Knex, applicationId: number): Promise<ClientSecretRow[]> {
  const rows = await db<ClientSecretRow>('client_secrets').where({ application_id: applicationId }).orderBy('id');
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
  }));
}

export async function deleteClientSecretRow(db: Knex, applicationId: number, secretId: number): Promise<number> {
  return db('client_secrets').where({ id: secretId, application_id: applicationId }).delete();
}

export async function markClientSecretUsed(db: Knex, secretId: number, now: number): Promise<void> {
  await db('client_secrets').where({ id: secretId }).update({ last_used_at: now });
}

export async function findAppRowByClientId(db: Knex, clientId: string): Promise<ApplicationRow | undefined> {
  return db<ApplicationRow>('applications').where({ client_id: clientId }).first();
}

export async function findAppRowOfOwner(
  db: Knex,
  ownerUserId: number,
  id: number,
): Promise<ApplicationRow | undefined> {
  return db<ApplicationRow>('applications').where({ id, owner_user_id: ownerUserId }).first();
}

export async function listAppRowsOfOwner(db: Knex, ownerUserId: number): Promise<ApplicationRow[]> {
  return db<ApplicationRow>('applications').where({ owner_user_id: ownerUserId }).orderBy('id');
}

export async function listAppRowsOfKind(db: Knex, kind: string): Promise<ApplicationRow[]> {
  return db<ApplicationRow>('applications').where({ registration_kind: kind }).orderBy('id');
}

export async function updateAppDetails(
  db: Knex,
  id: number,
  fields: Partial<
    Pick<
      ApplicationRow,
      | 'name'
      | 'description'
      | 'homepage'
      | 'redirect_uri'
      | 'id_token_signed_response_alg'
      | 'pkce_required'
      | 'require_pushed_authorization_requests'
      | 'redirect_uris'
      | 'token_endpoint_auth_method'
      | 'client_metadata'
      | 'registration_access_token_hash'
    >
  >,
): Promise<void> {
  await db('applications').where({ id }).update(fields);
}

/** Deletes the app; the schema cascades to its authorizations, codes and OAuth tokens. */
export async function deleteAppRow(db: Knex, id: number): Promise<number> {
  return db('applications').where({ id }).delete();
}
