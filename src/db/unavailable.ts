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
  // PostgreSQL's statement_timeout (57014).
  'STORE_STATEMENT_TIMEOUT',
  '57014',
]);

/** True when an error means the database (or queue database) cannot be reached right now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && unavailableCodes.has(code)) return true;
  if (name === 'KnexTimeoutError') return true;
  return typeof message === 'string' && /Connection terminated|Timeout acquiring a connection|Query read timeout/.test(message);
}
