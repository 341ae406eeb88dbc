// Small helpers for tests, benchmarks and scripts that start real servers.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Polls `url` until it answers 200 (a started service's /readyz). Fails at once, with what the
 * process printed, when the process exits first; and after `timeoutMs` as a guard against a hang.
 */
export async function waitForReady(
  url: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs = 90_000,
): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return res;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} was not ready within ${timeoutMs / 1000} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs the admin CLI (`src/cli/admin.ts ... --json`) with `env` and returns its JSON answer. */
export function adminCli(env: NodeJS.ProcessEnv, ...args: string[]): Record<string, unknown> {
  const result = spawnSync(process.execPath, ['src/cli/admin.ts', ...args, '--json'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`admin ${args.join(' ')} failed: ${result.stdout}${result.stderr}`); // --json: the error object is on stdout
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/**
 * What a live-service suite starts from, made through the admin CLI as an operator would: the user
 * `login` with an organization `<label>-org` they own, an app with one redirect URI, and a
 * workflows API key in their own namespace.
 */
export function provisionThroughCli(
  env: NodeJS.ProcessEnv,
  p: { label: string; login: string; password: string; redirectUri: string; appDescription: string },
): { app: { client_id: string; client_secret: string }; key: { id: number; token: string } } {
  const slug = p.label.toLowerCase();
  adminCli(env, 'user', 'create', '--login', p.login, '--password', p.password, '--name', `${p.label} User`);
  adminCli(env, 'org', 'create', '--namespace', `${slug}-org`, '--name', `${p.label} Org`, '--owner', p.login);
  const app = adminCli(
    env,
    'app',
    'create',
    '--owner',
    p.login,
    '--name',
    `${p.label} App`,
    '--description',
    p.appDescription,
    '--homepage',
    'http://127.0.0.1:9/',
    '--redirect-uri',
    p.redirectUri,
  ) as { client_id: string; client_secret: string };
  const key = adminCli(
    env,
    'token',
    'create',
    '--user',
    p.login,
    '--namespace',
    p.login,
    '--name',
    `${slug} key`,
    '--usage-scenario',
    'paid',
    '--permission',
    'workflows',
  ) as { id: number; token: string };
  return { app, key };
}

/**
 * The environment of a real service process (`src/main.ts`) on a fresh embedded PostgreSQL in a
 * temporary data directory, listening on a free port of 127.0.0.1, with response validation on.
 */
export async function embeddedServiceEnv(
  name: string,
  extra: Record<string, string> = {},
): Promise<{ env: NodeJS.ProcessEnv; baseUrl: string; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${name}-`));
  await chmod(dataDir, 0o755); // the embedded cluster runs as its own OS user when we are root
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const { BASE_URL: _vite, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    NODE_ENV: 'development', // response validation on: the live service checks itself too
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(await freePort()),
    ...extra,
  };
  return { env, baseUrl, dataDir };
}
