import { isDatabaseUnavailable } from './unavailable.ts';

// Store errors that say "try again", not "this request is wrong": a statement that lost a lock
// conflict, and a connection lost under a statement. Neither is a bug, so neither is a 500: a
// write that is safe to repeat is retried (retryConflicts), anything else is answered 503 with
// Retry-After (src/http/errorHandler.ts), as an unreachable store is (unavailable.ts).

/**
 * MySQL/MariaDB: 1213 ER_LOCK_DEADLOCK (the victim's transaction was rolled back), 1205
 * ER_LOCK_WAIT_TIMEOUT (the statement was rolled back), 1467 ER_AUTOINC_READ_FAILED (MariaDB's
 * report of the victim of a deadlock on InnoDB's table-level AUTO-INC lock, which an
 * `INSERT ... SELECT` holds to the end of its statement; rolled back as any deadlock victim).
 */
const MYSQL_CONFLICTS = new Set([1213, 1205, 1467]);
const MYSQL_CONFLICT_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_AUTOINC_READ_FAILED']);
/** PostgreSQL: serialization_failure, deadlock_detected, lock_not_available (lock_timeout). */
const PG_CONFLICTS = new Set(['40001', '40P01', '55P03']);

/** A statement (or transaction) the store rolled back because it lost a lock conflict: repeating it is safe. */
export function isLockConflict(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  if (typeof errno === 'number' && MYSQL_CONFLICTS.has(errno)) return true;
  return typeof code === 'string' && (MYSQL_CONFLICT_CODES.has(code) || PG_CONFLICTS.has(code));
}

/**
 * MySQL/MariaDB 1053 ER_SERVER_SHUTDOWN and 1927 ER_CONNECTION_KILLED, a socket that went away,
 * and the errors mysql2 marks fatal (the connection is closed: "Can't add new command when
 * connection is in closed state"), or pg's for a client whose connection failed.
 */
const LOST_CODES = new Set([
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);

/** The connection under a statement was lost: whether the statement took effect is unknown. */
export function isConnectionLost(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errno, fatal, message } = err as {
    code?: unknown;
    errno?: unknown;
    fatal?: unknown;
    message?: unknown;
  };
  if (typeof code === 'string' && LOST_CODES.has(code)) return true;
  if (errno === 1053 || errno === 1927) return true;
  if (fatal === true && !isLockConflict(err)) return true;
  return (
    typeof message === 'string' && /closed state|not queryable|Connection lost|connection is closed/i.test(message)
  );
}

/** Any store error that is not the request's fault and may pass: answered 503 with Retry-After, never 500. */
export function isTransientStoreError(err: unknown): boolean {
  return isLockConflict(err) || isConnectionLost(err) || isDatabaseUnavailable(err);
}

/** Tries of a write that keeps losing lock conflicts, and the first pause between them (doubled each time, jittered). */
export const CONFLICT_TRIES = 5;
const FIRST_PAUSE_MS = 5;

/**
 * `fn` again while it loses lock conflicts, up to CONFLICT_TRIES in all; then its last error (a
 * 503, errorHandler.ts). `fn` must be a unit the store rolls back whole on a conflict: one
 * autocommit statement, or a whole knex transaction (`db.transaction(...)`), never one statement
 * of a transaction that goes on.
 */
export async function retryConflicts<T>(fn: () => Promise<T>, tries = CONFLICT_TRIES): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isLockConflict(err) || attempt >= tries) throw err;
      const pause = FIRST_PAUSE_MS * 2 ** (attempt - 1);
      await new Promise((r) => setTimeout(r, pause / 2 + Math.random() * pause));
    }
  }
}
