import type { Knex } from 'knex';
import { usableNamespaces } from './namespaces.ts';

export interface NamespaceRow {
  name: string;
  user_id: number | null;
  org_id: number | null;
}

export async function findNamespace(db: Knex, name: string): Promise<NamespaceRow | undefined> {
  return db<NamespaceRow>('namespaces').where({ name }).first();
}

/** Claims a name for a user or an org; the primary key makes a second claim fail with a unique violation. */
export async function claimNamespace(db: Knex, row: NamespaceRow): Promise<void> {
  await db('namespaces').insert(row);
}

/** True when `name` is the user's own login or an organization the user belongs to. */
export async function namespaceUsableBy(db: Knex, userId: number, name: string): Promise<boolean> {
  const row = await usableNamespaces(db('namespaces as n').where('n.name', name), db.raw('?', [userId])).first(
    'n.name',
  );
  return row !== undefined;
}
