import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/insert.ts';
import { retryConflicts } from '../db/transient.ts';
import { batched, togetherElseAlone, type Outcome } from '../db/batched.ts';
import { dialectOf } from '../db/knex.ts';
import { prepared, type PreparedQuery } from '../db/prepared.ts';

// Refresh rotation's statements (store.ts insertSuccessorToken): a successor is stored in one
// statement that also checks that the token it succeeds and its grant stand. Times are epoch
// milliseconds (BIGINT).

// Batches of rotations under way at once. One at a time, a rotation batch waited for its commit's
// fsync (innodb_flush_log_at_trx_commit=1) and the next behind it: the refresh grant's bottleneck;
// side by side they share InnoDB's group commit (docs/benchmarks-history.md).
const ROTATIONS_UNDER_WAY = 4;

/** A pair to store, as hashes (store.ts insertToken, or a successor here). */
export interface NewToken {
  /** Null for a grant that does not descend from a code: then the token names its user and client (userId, applicationId). */
  authorizationId: number | null;
  codeId: number | null;
  userId?: number | null;
  applicationId?: number | null;
  accessTokenHash: string;
  refreshTokenHash: string;
  scope: string;
  /** Null (or absent) when the access token has the grant's scope. */
  accessScope?: string | null;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  createdAt: number;
  /** A successor's raw pair, sealed for the grace window (chain.store.ts), and until when it is kept. */
  sealedPair?: string | null;
  sealedUntil?: number | null;
}

/**
 * The rotation of a token stored without an authorization, in one statement as well: its grant is
 * the token itself, so the successor is stored, with the token's user and client, while the token
 * stands (read under a share lock, as for a token under an authorization). False when a concurrent
 * refresh rotated it first (the unique rotated_from_id) or it was revoked meanwhile.
 */
export async function insertSuccessorWithoutAuthorization(
  db: Knex,
  token: NewToken,
  rotatedFromId: number,
): Promise<boolean> {
  const params = {
    ...Object.fromEntries(SUCCESSOR_WITHOUT_AUTHORIZATION_FIELDS.map((f) => [f, token[f] ?? null])),
    rotatedFromId,
  } as Record<string, string | number | null>;
  try {
    return (await retryConflicts(() => successorWithoutAuthorizationInsert.run(db, params))) === 1;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

const SUCCESSOR_WITHOUT_AUTHORIZATION_FIELDS = [
  'accessTokenHash',
  'refreshTokenHash',
  'scope',
  'accessScope',
  'accessExpiresAt',
  'refreshExpiresAt',
  'createdAt',
  'sealedPair',
  'sealedUntil',
] as const;

const successorWithoutAuthorizationInsert = prepared<Record<string, string | number | null>>(
  'oauth_token_successor_without_authorization_insert',
  (db, param) => {
    const pg = dialectOf(db) === 'pg';
    const int = pg ? '?::bigint' : '?';
    return db.raw(
      `insert into oauth_tokens
       (authorization_id, code_id, user_id, application_id, access_token_hash, refresh_token_hash, scope, access_scope, access_expires_at, refresh_expires_at, created_at, sealed_pair, sealed_until, rotated_from_id)
     select null, null, p.user_id, p.application_id, ?, ?, ?, ?, ${int}, ${int}, ${int}, ?, ${int}, p.id from oauth_tokens p
      where p.id = ${int} and p.authorization_id is null and p.revoked_at is null ${pg ? 'for share' : 'lock in share mode'}`,
      [...SUCCESSOR_WITHOUT_AUTHORIZATION_FIELDS.map((f) => param(f)), param('rotatedFromId')],
    );
  },
);

export type Successor = NewToken & {
  accessScope: string | null;
  sealedPair: string | null;
  sealedUntil: number | null;
  rotatedFromId: number;
};

const MAX_SUCCESSORS_PER_INSERT = 32;

export const insertSuccessorsCoalesced = batched(
  async (db: Knex, successors: Successor[]) => {
    const calls = [];
    for (let i = 0; i < successors.length; i += MAX_SUCCESSORS_PER_INSERT)
      calls.push(insertSuccessors(db, successors.slice(i, i + MAX_SUCCESSORS_PER_INSERT)));
    return (await Promise.all(calls)).flat();
  },
  { parallel: ROTATIONS_UNDER_WAY },
);

/**
 * Stores the successors whose grants stand, in one statement: whether each was stored. When the
 * statement stored nothing (a token rotated meanwhile or presented twice in this batch, a deadlock
 * with a revocation of one of its grants, a row at fault), each goes again alone (of two with one
 * token, the first wins), so only a row at fault fails.
 */
function insertSuccessors(db: Knex, successors: Successor[]): Promise<Outcome<boolean>[]> {
  return togetherElseAlone(successors, async (some) => {
    let stored: number;
    try {
      // A deadlock victim (MariaDB's 1467 on the AUTO-INC lock this holds) goes again (transient.ts).
      const params = successorParams(some);
      stored = await retryConflicts(() => successorsInsertStatement(some.length).run(db, params));
    } catch (err) {
      if (some.length === 1 && isUniqueViolation(err)) return [false];
      throw err;
    }
    if (stored === some.length) return some.map(() => true);
    // A grant was revoked meanwhile (its select found no row): the others were stored, so an error
    // here is not the statement's and is not tried again.
    try {
      const storedHashes = new Set(
        (
          await db('oauth_tokens')
            .whereIn(
              'refresh_token_hash',
              some.map((s) => s.refreshTokenHash),
            )
            .pluck('refresh_token_hash')
        ).map(String),
      );
      return some.map((s) => storedHashes.has(s.refreshTokenHash));
    } catch (err) {
      return some.map(() => ({ failed: err }));
    }
  });
}

const SUCCESSOR_FIELDS = [
  'codeId',
  'accessTokenHash',
  'refreshTokenHash',
  'scope',
  'accessScope',
  'accessExpiresAt',
  'refreshExpiresAt',
  'createdAt',
  'rotatedFromId',
  'sealedPair',
  'sealedUntil',
  'authorizationId',
] as const;

/** The parameter names of the i-th successor of a statement, made once: a batch of 32 has 384. */
const PARAM_NAMES = Array.from({ length: MAX_SUCCESSORS_PER_INSERT }, (_, i) =>
  SUCCESSOR_FIELDS.map((f) => `${f}${i}`),
);

/** The successors insert's parameters (its statement names the i-th successor's fields `${field}${i}`). */
function successorParams(successors: Successor[]): Record<string, string | number | null> {
  const params: Record<string, string | number | null> = {};
  for (let i = 0; i < successors.length; i += 1) {
    const s = successors[i]!;
    const names = PARAM_NAMES[i]!;
    for (let f = 0; f < SUCCESSOR_FIELDS.length; f += 1) params[names[f]!] = s[SUCCESSOR_FIELDS[f]!];
  }
  return params;
}

type SuccessorsInsert = PreparedQuery<Record<string, string | number | null>, Record<string, unknown>>;
const successorsInsertStatements = new Map<number, SuccessorsInsert>();

/**
 * INSERT ... SELECT (MySQL and PostgreSQL alike), which the builder cannot write with a column
 * list: one select per successor, each finding its grant's row only while the grant stands.
 * Prepared for each count of rows (1 to 32). PostgreSQL types a UNION's untyped parameters as
 * text, so there the integers say they are bigints.
 */
function successorsInsertStatement(count: number): SuccessorsInsert {
  let query = successorsInsertStatements.get(count);
  if (!query) {
    query = prepared(`oauth_token_successors_insert_${count}`, (db, param) => {
      const pg = dialectOf(db) === 'pg';
      const int = pg ? '?::bigint' : '?';
      // The token rotated must not be revoked (a chain's revocation, chain.store.ts), read under a
      // share lock: a revocation that updates it waits for this insert, and this insert waits for a
      // revocation under way, then sees it revoked.
      const stands = `exists (select 1 from oauth_tokens p where p.id = ${int} and p.revoked_at is null ${pg ? 'for share' : 'lock in share mode'})`;
      const select = `select id, ${int}, ?, ?, ?, ?, ${int}, ${int}, ${int}, ${int}, ?, ${int} from authorizations where id = ? and revoked_at is null and ${stands}`;
      return db.raw(
        `insert into oauth_tokens
           (authorization_id, code_id, access_token_hash, refresh_token_hash, scope, access_scope, access_expires_at, refresh_expires_at, created_at, rotated_from_id, sealed_pair, sealed_until)
         ${Array.from({ length: count }, () => select).join(' union all ')}`,
        Array.from({ length: count }, (_, i) => [
          ...SUCCESSOR_FIELDS.map((f) => param(`${f}${i}`)),
          param(`rotatedFromId${i}`),
        ]).flat(),
      );
    });
    successorsInsertStatements.set(count, query);
  }
  return query;
}
