import type { Knex } from 'knex';

// SQL of the JWT signing keys (table signing_keys, 0001_initial). Times are epoch milliseconds.
// Each algorithm (`alg`: ES256, RS256) has keys of its own: a current one, and retired ones that
// still verify. Every read and rotation names the algorithm, so one algorithm's key never stands
// in for another's. A key signs from its created_at until its retired_at; a rotation may put both
// in the future (a key published ahead of use, signingKeys.ts).

export interface SigningKeyRow {
  kid: string;
  alg: string;
  /** Private JWK as JSON text, sealed with the key-encryption key (src/shared/sealing.ts). Never log a row of this table. */
  private_jwk: string;
  public_jwk: string;
  /** When it starts to sign (it is published from its insert, which may be earlier). */
  created_at: number;
  /** When it stops signing (null: not yet known); it stays published for the tokens it signed. */
  retired_at: number | null;
}

export async function insertSigningKey(db: Knex, row: SigningKeyRow): Promise<void> {
  await db('signing_keys').insert(row);
}

/** The newest key of `alg` that signs at `now` (created, not retired): the one to sign with. */
export async function findCurrentSigningKey(db: Knex, alg: string, now: number): Promise<SigningKeyRow | undefined> {
  return db<SigningKeyRow>('signing_keys')
    .where({ alg })
    .where('created_at', '<=', now)
    .where((q) => q.whereNull('retired_at').orWhere('retired_at', '>', now))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'kid', order: 'desc' },
    ])
    .first();
}

/**
 * Public keys that still verify tokens: every key not retired, every key retired after `since`,
 * and, of each algorithm in `algs`, the most recently retired one ("current and previous").
 */
export async function listVerificationKeys(
  db: Knex,
  since: number,
  algs: readonly string[],
): Promise<Pick<SigningKeyRow, 'kid' | 'alg' | 'public_jwk' | 'retired_at'>[]> {
  let query = db<SigningKeyRow>('signing_keys').whereNull('retired_at').orWhere('retired_at', '>', since);
  for (const alg of algs) {
    const previous = db('signing_keys')
      .where({ alg })
      .whereNotNull('retired_at')
      .orderBy('retired_at', 'desc')
      .limit(1)
      .select('kid');
    // MySQL refuses LIMIT inside IN (subquery); a derived table is accepted by both dialects.
    query = query.orWhereIn('kid', db.select('p.kid').from(previous.as('p')));
  }
  return query.orderBy('created_at', 'desc').select('kid', 'alg', 'public_jwk', 'retired_at');
}

/** Whether any key of `alg` was ever stored (current, pending or retired). */
export async function anySigningKey(db: Knex, alg: string): Promise<boolean> {
  return (await db('signing_keys').where({ alg }).first('kid')) !== undefined;
}

/** Retires, at `at`, every key of `alg` with no retirement yet; returns their kids. */
export async function retireSigningKeys(db: Knex, alg: string, at: number): Promise<string[]> {
  const kids = await db('signing_keys').where({ alg }).whereNull('retired_at').forUpdate().pluck('kid');
  if (kids.length) await db('signing_keys').whereIn('kid', kids).update({ retired_at: at });
  return kids as string[];
}
