// Starts the real service (`src/main.ts`) on a fresh store and provisions what the contract suite
// and schemathesis need, the way an operator and a third-party app would: the admin CLI creates
// two users (A with an organization, an app and an API key; B with an API key) and a third (C)
// whose grants schemathesis revokes; the real OAuth flow (login, consent, code exchange) yields A
// and B an access token with the scopes of the open API and workflows:read.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { createKnex } from '../src/db/knex.ts';
import { Browser, authorizeInBrowser, logIn, PKCE } from '../test/support/oauthFlow.ts';
import { adminCli, embeddedServiceEnv, provisionThroughCli, waitForReady } from '../test/support/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

export interface LiveCredentials {
  CONTRACT_API_KEY: string;
  CONTRACT_ACCESS_TOKEN: string;
  CONTRACT_REFRESH_TOKEN: string;
  CONTRACT_CLIENT_ID: string;
  CONTRACT_CLIENT_SECRET: string;
  CONTRACT_NAMESPACE: string;
  CONTRACT_TOKEN_ID: string;
  /** User A's login, for the real login and consent pages (schemathesis mints codes with them). */
  CONTRACT_LOGIN: string;
  CONTRACT_PASSWORD: string;
  CONTRACT_REDIRECT_URI: string;
  /** A second user, B, with an API key and an access token of the same app (two identities). */
  CONTRACT_B_LOGIN: string;
  CONTRACT_B_PASSWORD: string;
  CONTRACT_B_API_KEY: string;
  CONTRACT_B_ACCESS_TOKEN: string;
  /** A third user whose grants schemathesis may revoke (a revocation ends the user's whole grant). */
  CONTRACT_C_LOGIN: string;
  CONTRACT_C_PASSWORD: string;
}

export interface LiveService {
  baseUrl: string;
  credentials: LiveCredentials;
  /** Everything the service printed, for diagnosing a failure. */
  output(): string;
  /** The service's environment (for the admin CLI on the same store). */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/**
 * The live service's store. `embedded`: the zero-setup default (an embedded PostgreSQL holds the
 * store and the queue). `production`: what operators run, a MySQL/MariaDB store (a fresh database
 * with the server's default collation on CONTRACT_MYSQL_URL's server, else TEST_MYSQL_URL's), the
 * queue on a PostgreSQL of its own, NODE_ENV=production (responses are still validated).
 * CONTRACT_STORE selects it when the caller does not.
 */
export type LiveStore = 'embedded' | 'production';

export function liveStoreFromEnv(): LiveStore {
  const store = process.env.CONTRACT_STORE ?? 'embedded';
  if (store !== 'embedded' && store !== 'production')
    throw new Error(`CONTRACT_STORE must be embedded or production (got "${store}")`);
  return store;
}

/** A fresh MySQL database for the production store, and the queue's own PostgreSQL; `drop` removes both. */
async function productionStore(
  dataDir: string,
  queuePort: number,
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const server = process.env.CONTRACT_MYSQL_URL ?? process.env.TEST_MYSQL_URL;
  if (!server)
    throw new Error(
      'CONTRACT_STORE=production needs CONTRACT_MYSQL_URL or TEST_MYSQL_URL (sh scripts/mariadb.sh prints one)',
    );
  const name = `contract_${randomBytes(4).toString('hex')}`;
  const admin = createKnex(server, { poolMax: 1 });
  try {
    await admin.raw('CREATE DATABASE ??', [name]); // the server's default character set and collation
  } finally {
    await admin.destroy();
  }
  const storeUrl = new URL(server);
  storeUrl.pathname = `/${name}`;
  const queue = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'queue-pg'),
    port: queuePort,
    database: 'queue',
    persistent: false,
  });
  return {
    env: {
      DATABASE_URL: storeUrl.toString(),
      QUEUE_URL: queue.url,
      NODE_ENV: 'production',
      RESPONSE_VALIDATION: 'true',
      SECRETS_KEY: randomBytes(32).toString('base64'), // production requires the key-encryption key
    },
    async drop() {
      await queue.stop();
      const dropper = createKnex(server, { poolMax: 1 });
      try {
        await dropper.raw('DROP DATABASE IF EXISTS ??', [name]);
      } finally {
        await dropper.destroy();
      }
    },
  };
}

export async function startLiveService(
  extraEnv: Record<string, string> = {},
  store: LiveStore = liveStoreFromEnv(),
): Promise<LiveService> {
  const { env, baseUrl, dataDir } = await embeddedServiceEnv('oa-live', extraEnv);
  const production = store === 'production' ? await productionStore(dataDir, Number(env.EMBEDDED_PG_PORT)) : undefined;
  Object.assign(env, production?.env, extraEnv);
  let text = '';
  const child = spawn(process.execPath, ['src/main.ts'], { cwd: root, env });
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const output = () => text;
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await production?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitForReady(`${baseUrl}/readyz`, child, output);
    const login = 'contract-user';
    const password = 'contract-password-1';
    const redirectUri = 'http://127.0.0.1:9/callback';
    const { app, key } = provisionThroughCli(env, {
      label: 'Contract',
      login,
      password,
      redirectUri,
      appDescription: 'Drives the contract suite',
    });

    const grant = async (user: string, pass: string) => {
      const browser = new Browser(baseUrl);
      await logIn(browser, user, pass);
      const authorizeUrl = new URL('/oauth/authorize', baseUrl);
      authorizeUrl.search = new URLSearchParams({
        response_type: 'code',
        client_id: app.client_id,
        redirect_uri: redirectUri,
        // workflows:read too, so that either credential of listWorkflows and getWorkflow reads.
        scope: 'user_info api_key workflows:read',
        state: 'contract',
      }).toString();
      const callback = await authorizeInBrowser(browser, authorizeUrl); // with the helpers' PKCE challenge
      const code = callback.searchParams.get('code');
      if (!code) throw new Error(`no code in the callback: ${callback.toString()}`);
      const tokenResponse = await fetch(`${baseUrl}/api/open/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          code_verifier: PKCE.verifier,
          client_id: app.client_id,
          client_secret: app.client_secret,
        }).toString(),
      });
      const tokens = (await tokenResponse.json()) as { access_token: string; refresh_token: string };
      if (!tokenResponse.ok) throw new Error(`code exchange failed: ${JSON.stringify(tokens)}`);
      return tokens;
    };
    const tokens = await grant(login, password);
    const loginB = 'contract-user-b';
    const passwordB = 'contract-password-b';
    adminCli(env, 'user', 'create', '--login', loginB, '--password', passwordB, '--name', 'Contract User B');
    const keyB = adminCli(
      env,
      'token',
      'create',
      '--user',
      loginB,
      '--namespace',
      loginB,
      '--name',
      'contract key b',
      '--usage-scenario',
      'trial',
      '--permission',
      'workflows',
    ) as { token: string };
    const tokensB = await grant(loginB, passwordB);
    const loginC = 'contract-user-c';
    const passwordC = 'contract-password-c';
    adminCli(env, 'user', 'create', '--login', loginC, '--password', passwordC, '--name', 'Contract User C');
    return {
      baseUrl,
      output,
      env,
      stop,
      credentials: {
        CONTRACT_API_KEY: key.token,
        CONTRACT_ACCESS_TOKEN: tokens.access_token,
        CONTRACT_REFRESH_TOKEN: tokens.refresh_token,
        CONTRACT_CLIENT_ID: app.client_id,
        CONTRACT_CLIENT_SECRET: app.client_secret,
        CONTRACT_NAMESPACE: login,
        CONTRACT_TOKEN_ID: String(key.id),
        CONTRACT_LOGIN: login,
        CONTRACT_PASSWORD: password,
        CONTRACT_REDIRECT_URI: redirectUri,
        CONTRACT_B_LOGIN: loginB,
        CONTRACT_B_PASSWORD: passwordB,
        CONTRACT_B_API_KEY: keyB.token,
        CONTRACT_B_ACCESS_TOKEN: tokensB.access_token,
        CONTRACT_C_LOGIN: loginC,
        CONTRACT_C_PASSWORD: passwordC,
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
