// Which store errors are "try again": the codes the drivers give (mysql2 sets `errno` and `code`,
// pg sets the SQLSTATE as `code`), as the fault tests meet them for real (test/faults/storeConflicts).
import { describe, expect, it } from 'vitest';
import { isConnectionLost, isLockConflict, isTransientStoreError, retryConflicts } from './transient.ts';

const error = (fields: Record<string, unknown>) => Object.assign(new Error('store error'), fields);

describe('transient store errors', () => {
  it.each([
    ['MariaDB 1467 (AUTO-INC deadlock victim)', { errno: 1467, code: 'ER_AUTOINC_READ_FAILED' }],
    ['MySQL 1213 deadlock', { errno: 1213, code: 'ER_LOCK_DEADLOCK' }],
    ['MySQL 1205 lock wait timeout', { errno: 1205, code: 'ER_LOCK_WAIT_TIMEOUT' }],
    ['PostgreSQL deadlock_detected', { code: '40P01' }],
    ['PostgreSQL serialization_failure', { code: '40001' }],
    ['PostgreSQL lock_not_available', { code: '55P03' }],
  ])('%s is a lock conflict, and transient', (_name, fields) => {
    expect(isLockConflict(error(fields))).toBe(true);
    expect(isConnectionLost(error(fields))).toBe(false);
    expect(isTransientStoreError(error(fields))).toBe(true);
  });

  it.each([
    ['mysql2 PROTOCOL_CONNECTION_LOST', { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }],
    ['MariaDB 1927 connection killed', { errno: 1927, code: 'ER_CONNECTION_KILLED' }],
    ['MySQL 1053 server shutdown', { errno: 1053, code: 'ER_SERVER_SHUTDOWN' }],
    ['a socket reset', { code: 'ECONNRESET' }],
    ['a closed mysql2 connection', { message: "Can't add new command when connection is in closed state" }],
    ['PostgreSQL admin_shutdown', { code: '57P01' }],
  ])('%s is transient', (_name, fields) => {
    expect(isTransientStoreError(error(fields))).toBe(true);
    expect(isLockConflict(error(fields))).toBe(false);
  });

  it.each([
    ['a unique violation', { errno: 1062, code: 'ER_DUP_ENTRY' }],
    ['PostgreSQL unique_violation', { code: '23505' }],
    ['a syntax error', { errno: 1064, code: 'ER_PARSE_ERROR' }],
    ['a plain Error', {}],
  ])('%s is not transient', (_name, fields) => {
    expect(isTransientStoreError(error(fields))).toBe(false);
  });

  it('retryConflicts makes a call again while it loses lock conflicts, and gives up with its error after the tries', async () => {
    let calls = 0;
    expect(await retryConflicts(async () => (++calls < 3 ? Promise.reject(error({ errno: 1467 })) : 'stored'))).toBe(
      'stored',
    );
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      retryConflicts(async () => (calls++, Promise.reject(error({ code: '40P01' }))), 2),
    ).rejects.toMatchObject({ code: '40P01' });
    expect(calls).toBe(2);
    calls = 0;
    await expect(
      retryConflicts(async () => (calls++, Promise.reject(error({ code: 'ER_DUP_ENTRY' })))),
    ).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(calls).toBe(1);
  });
});
