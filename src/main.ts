// `npm start`: validates the configuration, opens (or starts) the database, migrates, seeds the
// demo data on first start when asked (DEMO; development on the embedded database), and serves HTTP until SIGTERM/SIGINT, then shuts down gracefully.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { listen, loadConfigOrExit, orExit, stopGracefully } from './lifecycle.ts';
import type { AppContext } from './context.ts';
import { openDatabase, resolveQueueUrl } from './db/connect.ts';
import { createApp } from './app.ts';
import { createLogger } from './http/logger.ts';
import { createHttpServer } from './http/server.ts';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { DEMO, seedDemo, type DemoSeed } from './accounts/seed.ts';
import { anyUserExists } from './accounts/users.ts';
import { startRunMachinery } from './machinery.ts';
import { setPasswordHashCost } from './shared/crypto.ts';

const FIRST_OWNER_HINT = 'npm run -s admin -- user create --login LOGIN --password PASSWORD --name NAME';

/**
 * What a person starting the service needs: where it is, the demo login and its secrets (first
 * start with DEMO only), or how to create the first account. Secrets go only to a terminal: when
 * stdout is not a TTY it is a log stream (a container, a process manager), so the service logs
 * what was created without any secret.
 */
function announce(config: Config, logger: Logger, seed: DemoSeed | null, hasUsers: boolean): void {
  if (!process.stdout.isTTY) {
    if (seed) {
      logger.info(
        { login: seed.user.login, organization: seed.org.namespace, client_id: seed.app.client_id },
        'First start: demo data created (user, organization, app, API key); its secrets are printed only to a terminal',
      );
    }
    if (!hasUsers) logger.warn(`No account yet: create the first owner with \`${FIRST_OWNER_HINT}\``);
    return;
  }
  const lines = [
    `\n  Service:  ${config.BASE_URL}`,
    `  Log in:   ${config.BASE_URL}/login${config.DEMO ? `  (user "${DEMO.login}")` : ''}`,
  ];
  if (seed) {
    lines.push(
      '',
      '  First start: demo data created. These secrets are shown once; they are stored only as hashes.',
      `    login:          ${seed.user.login} / ${seed.user.password}`,
      `    organization:   ${seed.org.namespace}`,
      `    app:            ${seed.app.name}  client_id=${seed.app.client_id}`,
      `                    client_secret=${seed.app.client_secret}`,
      `                    redirect_uri=${seed.app.redirect_uri}`,
      `    API key:        ${seed.apiKey.token}  (namespace ${seed.apiKey.namespace}, permission workflows)`,
      `    workflows:      ${seed.workflows.map((w) => w.name).join(', ')}  (${config.BASE_URL}/workflows)`,
      '  Service secrets (session key, signing keys) are generated and kept in the database, sealed.',
    );
  }
  if (!hasUsers) lines.push('', '  No account yet. Create the first owner:', `    ${FIRST_OWNER_HINT}`);
  console.log(lines.join('\n') + '\n');
}

async function main(): Promise<void> {
  // `npm start -- --demo`: the same as DEMO=true (refused in production).
  if (process.argv.slice(2).includes('--demo')) process.env.DEMO = 'true';
  const config = loadConfigOrExit();
  setPasswordHashCost(config.PASSWORD_HASH_COST);
  // A person at a terminal reads lines; a log collector (stdout not a TTY) gets JSON.
  const logger = createLogger({ level: config.LOG_LEVEL, pretty: process.stdout.isTTY });
  const progress = (message: string) => logger.info(message);
  const database = await orExit(
    openDatabase(config, { logger, onProgress: progress }),
    config.DATABASE_URL ? { url: config.DATABASE_URL, variable: 'DATABASE_URL' } : undefined,
  );
  const ctx: AppContext = { config, db: database.db, logger, sealer: database.sealer, now: Date.now };
  const queueUrl = resolveQueueUrl(config, database);
  if (queueUrl) {
    ctx.runs = await orExit(startRunMachinery(ctx, { queueUrl, worker: config.RUN_WORKER }), {
      url: queueUrl,
      variable: config.QUEUE_URL ? 'QUEUE_URL' : 'DATABASE_URL',
    });
    ctx.queueHealth = ctx.runs.queue.health;
  } else {
    logger.warn('no queue database (MySQL store without QUEUE_URL): workflow runs are disabled');
  }
  const app = createApp(ctx);
  const server = createHttpServer(app, {
    headersMs: config.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    requestMs: config.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    keepAliveMs: config.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
  });
  const refused = await listen(server, config.PORT, config.HOST);
  if (refused) {
    // Another service on the port, say: one line naming PORT/HOST, and nothing left running.
    console.error(refused);
    await ctx.runs?.stop();
    await database.close();
    process.exit(1);
  }
  const { port } = server.address() as AddressInfo;
  logger.info({ port, dialect: database.dialect, embedded: Boolean(database.embedded) }, 'listening');
  // Seeded only once the service listens: a start that fails before (the port taken) must not
  // create the demo data and lose its once-shown secrets with the crash. A SIGTERM that comes while
  // it seeds lets the seed finish before the database closes.
  const seeding = config.DEMO ? seedDemo({ db: database.db, config, now: Date.now }) : Promise.resolve(null);
  stopGracefully(
    logger,
    'service',
    async () => {
      // Readiness first: /readyz answers 503 from now on, so a load balancer sends no new work here.
      ctx.stopping = true;
      // A `Prefer: wait` request is answered now with its run as it stands (a start: 202 with
      // Location, as a wait that ran out); new ones are declined (answered at once). Event streams
      // never go idle: each ends now, telling its client to reconnect (to another process).
      ctx.runs?.waits.drain();
      ctx.runs?.streams.endAll();
      // Served a while longer (SHUTDOWN_DRAIN_SECONDS) while the balancer sees the 503 and stops sending.
      if (config.SHUTDOWN_DRAIN_SECONDS > 0)
        await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_SECONDS * 1000));
      server.close();
      // close() ends only the connections idle right now; a keep-alive connection whose request
      // was in flight turns idle later and would hold the server open for keepAliveTimeout (65 s).
      const closeIdle = setInterval(() => server.closeIdleConnections(), 100);
      server.closeIdleConnections();
      await once(server, 'close');
      clearInterval(closeIdle);
      await seeding.catch(() => undefined);
      await ctx.runs?.stop();
      await database.close();
    },
    config.SHUTDOWN_GRACE_SECONDS,
  );
  const seed = await seeding;
  const hasUsers = seed !== null || (await anyUserExists(database));
  announce(config, logger, seed, hasUsers);
}

await main();
