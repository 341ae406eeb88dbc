import type { Knex } from 'knex';

// SQL of the JWT signing keys (table signing_keys, 0001_initial). Times are epoch milliseconds.

export interface SigningKeyRow {
  kid: string;
  alg: string;
  /** Private JWK as JSON text, sealed with the key-encryption key (src/shared/sealing.ts). Never log a row of this table. */
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

export async function insertSigningKey(db: Knex, row: SigningKeyRow): Promise<void> {
  await db('signing_keys').insert(row);
}

/** The newest key not retired: the one to sign with. */
export async function findCurrentSigningKey(db: Knex): Promise<SigningKeyRow | undefined> {
  return db<SigningKeyRow>('signing_keys').whereNull('retired_at').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'kid', order: 'desc' }]).first();
}

/**
 * Public keys that still verify tokens: every key not retired, every key retired after `since`,
 * and the most recently retired one ("current and previous").
 */
export async function listVerificationKeys(db: Knex, since: number): Promise<Pick<SigningKeyRow, 'kid' | 'public_jwk' | 'retired_at'>[]> {
  const previous = db('signing_keys').whereNotNull('retired_at').orderBy('retired_at', 'desc').limit(1).select('kid');
  const rows = await db<SigningKeyRow>('signing_keys')
    .whereNull('retired_at')
    .orWhere('retired_at', '>', since)
    // MySQL refuses LIMIT inside IN (subquery); a derived table is accepted by both dialects.
    .orWhereIn('kid', db.select('p.kid').from(previous.as('p')))
    .orderBy('created_at', 'desc')
    .select('kid', 'public_jwk', 'retired_at');
  return rows;
}

/** Retires every key still in use; returns their kids. */
export async function retireSigningKeys(db: Knex, now: number): Promise<string[]> {
  const kids = await db('signing_keys').whereNull('retired_at').forUpdate().pluck('kid');
  if (kids.length) await db('signing_keys').whereIn('kid', kids).update({ retired_at: now });
  return kids as string[];
}
