// SQL of per-user secrets, named by intent. `value` is always sealed (service.ts seals it); no query
// here returns it except the one that opens secrets for a run.
import type { Knex } from 'knex';
import { insertReturningId } from '../db/insert.ts';

export interface SecretRow {
  id: number;
  user_id: number;
  name: string;
  value: string;
  created_at: number;
  updated_at: number;
}

export type SecretMeta = Pick<SecretRow, 'name' | 'created_at' | 'updated_at'>;

const ofUser = (db: Knex | Knex.Transaction, userId: number) =>
  db<SecretRow>('user_secrets').where({ user_id: userId });

const meta = (row: SecretMeta): SecretMeta => ({
  name: row.name,
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
});

export async function listSecretNames(db: Knex, userId: number): Promise<SecretMeta[]> {
  const rows = await ofUser(db, userId).select('name', 'created_at', 'updated_at').orderBy('name');
  return rows.map(meta);
}

export async function findSecretForUpdate(
  trx: Knex.Transaction,
  userId: number,
  name: string,
): Promise<(SecretMeta & { id: number }) | undefined> {
  const row = await ofUser(trx, userId).andWhere({ name }).forUpdate().first('id', 'name', 'created_at', 'updated_at');
  return row ? { ...meta(row), id: Number(row.id) } : undefined;
}

export async function countSecrets(trx: Knex.Transaction, userId: number): Promise<number> {
  const [row] = (await ofUser(trx, userId).count({ n: '*' })) as { n: number | string }[];
  return Number(row!.n);
}

/** A new row whose value is sealed next (the seal binds to the row's id, known only once inserted). */
export async function insertSecret(trx: Knex.Transaction, userId: number, name: string, now: number): Promise<number> {
  return insertReturningId(trx, 'user_secrets', { user_id: userId, name, value: '', created_at: now, updated_at: now });
}

export async function setSecretValue(trx: Knex.Transaction, id: number, sealed: string, now: number): Promise<void> {
  await trx('user_secrets').where({ id }).update({ value: sealed, updated_at: now });
}

export async function deleteSecretByName(db: Knex, userId: number, name: string): Promise<boolean> {
  return (await ofUser(db, userId).andWhere({ name }).delete()) > 0;
}

/** The sealed values of these names of the user (a name they do not have is absent). */
export async function findSealedSecrets(
  db: Knex,
  userId: number,
  names: readonly string[],
): Promise<Pick<SecretRow, 'id' | 'name' | 'value'>[]> {
  if (names.length === 0) return [];
  const rows = await ofUser(db, userId).whereIn('name', names).select('id', 'name', 'value');
  return rows.map((r) => ({ id: Number(r.id), name: r.name, value: r.value }));
}
