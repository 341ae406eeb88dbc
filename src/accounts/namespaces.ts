import type { Knex } from 'knex';

/**
 * Keeps the rows whose namespace (`namespaces as n`, joined by the caller) `user` may use: their own
 * login, or an organization they are a member of. `user` is a column (`db.ref`) or a value
 * (`db.raw('?', [id])`). The one place this rule is
 * written; other domains filter their queries with it, so that issuance stays one round trip.
 */
export function usableNamespaces<Q extends Knex.QueryBuilder>(query: Q, user: Knex.Raw): Q {
  return query
    .leftJoin('memberships as m', function joinMembership() {
      this.on('m.org_id', '=', 'n.org_id').andOn('m.user_id', '=', user);
    })
    .andWhere((w) => w.where('n.user_id', user).orWhereNotNull('m.user_id')) as Q;
}
