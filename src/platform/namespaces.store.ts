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

/**
 * Keeps the rows whose namespace (`namespaces as n`, joined by the caller) `user` may use: their own
 * login, or an organization they are a member of. `user` is a column (`db.ref`) or a value
 * (`db.raw('?', [id])`). The one place this rule is written.
 */
export function usableNamespaces<Q extends Knex.QueryBuilder>(query: Q, user: Knex.Raw): Q {
  return query
    .leftJoin('memberships as m', function joinMembership() {
      this.on('m.org_id', '=', 'n.org_id').andOn('m.user_id', '=', user);
    })
    .andWhere((w) => w.where('n.user_id', user).orWhereNotNull('m.user_id')) as Q;
}

/** True when `name` is the user's own login or an organization the user belongs to. */
export async function namespaceUsableBy(db: Knex, userId: number, name: string): Promise<boolean> {
  const row = await usableNamespaces(db('namespaces as n').where('n.name', name), db.raw('?', [userId])).first('n.name');
  return row !== undefined;
}
