// What every entry point (`npm start`, `npm run worker`) does around its work: read the
// configuration or exit with its problems, and stop gracefully on SIGTERM/SIGINT.
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { databaseProblem } from './db/connect.ts';
import { EmbeddedPostgresError } from './db/embedded.ts';
import { SealingError } from './shared/sealing.ts';
import { shutdownTracing } from './shared/tracing.ts';

/** The validated configuration; on a bad value, prints every problem and exits 1. */
export function loadConfigOrExit(load: () => Config = loadConfig): Config {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

/**
 * A start-up step that fails for a reason the operator can fix (a database that cannot be reached,
 * an embedded PostgreSQL that cannot start, a SECRETS_KEY that did not seal the stored secrets) prints one line saying what to check and exits 1;
 * anything else is a bug and keeps its stack.
 */
export async function orExit<T>(
  step: Promise<T>,
  database?: { url: string; variable: 'DATABASE_URL' | 'QUEUE_URL' },
): Promise<T> {
  try {
    return await step;
  } catch (err) {
    const line =
      err instanceof EmbeddedPostgresError
        ? err.message
        : // A key-encryption key that does not open the stored secrets: say which, in one line.
          err instanceof SealingError
          ? `Cannot open the stored secrets: ${err.message}`
          : database && databaseProblem(err, database.url, database.variable);
    if (!line) throw err;
    console.error(line);
    process.exit(1);
  }
}

/** Why the OS refused to listen, as the operator fixes it (by PORT or HOST). */
const LISTEN_PROBLEMS: Record<string, (where: string) => string> = {
  EADDRINUSE: (where) =>
    `Cannot listen on ${where}: another process is using that port. Stop it, or set PORT to a free port (e.g. PORT=3001).`,
  EACCES: (where) =>
    `Cannot listen on ${where}: permission denied (ports below 1024 need privileges). Set PORT to 1024 or above.`,
  EADDRNOTAVAIL: (where) =>
    `Cannot listen on ${where}: HOST is not an address of this machine. Set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for all).`,
};

/**
 * Starts listening; answers undefined once it listens, or the one line that says what to change
 * when the OS refuses the port or host (anything else is a bug and keeps its stack).
 */
export async function listen(server: Server, port: number, host: string): Promise<string | undefined> {
  try {
    await once(server.listen(port, host), 'listening');
    return undefined;
  } catch (err) {
    const problem = LISTEN_PROBLEMS[(err as NodeJS.ErrnoException).code ?? ''];
    if (!problem) throw err;
    return problem(`${host.includes(':') ? `[${host}]` : host}:${port} (PORT=${port}, HOST=${host})`);
  }
}

/**
 * On the first SIGTERM or SIGINT, runs `stop` (finish in-flight work, close pools) and exits 0; if
 * it takes longer than `graceSeconds` (SHUTDOWN_GRACE_SECONDS), exits 1 (held jobs are then
 * retried elsewhere).
 */
export function stopGracefully(logger: Logger, what: string, stop: () => Promise<void>, graceSeconds: number): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceSeconds }, `${what} stopping: finishing in-flight work`);
    const force = setTimeout(() => {
      logger.error({ graceSeconds }, `${what} took too long to stop (SHUTDOWN_GRACE_SECONDS); exiting`);
      process.exit(1);
    }, graceSeconds * 1000);
    force.unref();
    await stop();
    await shutdownTracing(); // the spans still batched are exported before the process exits
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
