import type { Knex } from 'knex';
import { dialectOf } from './knex.ts';
import { isLockConflict } from './transient.ts';

/** Inserts one row and returns its generated integer key (RETURNING on PostgreSQL, insertId on MySQL). */
export async function insertReturningId(
  db: Knex | Knex.Transaction,
  table: string,
  row: Record<string, unknown>,
  idColumn = 'id',
): Promise<number> {
  if (dialectOf(db) === 'pg') {
    const [inserted] = (await db(table).insert(row).returning(idColumn)) as Array<Record<string, number>>;
    return Number(inserted![idColumn]);
  }
  const [id] = (await db(table).insert(row)) as number[];
  return Number(id);
}

/** True for a unique-key violation on either dialect (PostgreSQL 23505, MySQL ER_DUP_ENTRY). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.code === '23505' || e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062;
}

/**
 * A write that lost to a concurrent one (a unique key taken, or a lock conflict the store rolled it
 * back for: a deadlock, MariaDB's 1467 AUTO-INC deadlock, a lock wait timeout; src/db/transient.ts):
 * read again and retry.
 */
export function isWriteConflict(err: unknown): boolean {
  return isUniqueViolation(err) || isLockConflict(err);
}
