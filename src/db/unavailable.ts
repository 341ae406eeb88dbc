const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  '57P01', // admin_shutdown
  '57P03', // cannot_connect_now
  '08006', // connection_failure
  '08001',
  '08003',
  // No answer within DATABASE_STATEMENT_TIMEOUT_SECONDS: the driver's bound (a stalled server) or
  // the server's (PostgreSQL's statement_timeout, MariaDB's max_statement_time, MySQL's max_execution_time).
  'STORE_STATEMENT_TIMEOUT',
  '57014',
  'ER_STATEMENT_TIMEOUT', // MariaDB's max_statement_time (1969)
  'ER_QUERY_TIMEOUT', // MySQL's max_execution_time (3024)
]);

/** True when an error means the database (or queue database) cannot be reached right now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && unavailableCodes.has(code)) return true;
  if (name === 'KnexTimeoutError') return true;
  return (
    typeof message === 'string' &&
    /Connection terminated|Timeout acquiring a connection|Query read timeout/.test(message)
  );
}
