import type { Knex } from 'knex';

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
  const row = await db('namespaces as n')
    .leftJoin('memberships as m', function joinMembership() {
      this.on('m.org_id', '=', 'n.org_id').andOn('m.user_id', '=', db.raw('?', [userId]));
    })
    .where('n.name', name)
    .andWhere((q) => q.where('n.user_id', userId).orWhereNotNull('m.user_id'))
    .first('n.name');
  return row !== undefined;
}
