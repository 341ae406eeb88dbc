// The workflow-engine peer of row 9: n8n, installed from the npm registry into a cache outside the
// repository (~/.cache/openauth-bench/n8n; see CACHE), run as its own process with its
// default database (SQLite in its own fresh folder, pool of 3) and default execution settings
// (every execution saved), with telemetry, version notifications, templates, banners and its MCP
// registry refresh off so that it talks to nothing beyond loopback. Its workflow: Webhook (POST) ->
// Set (text = the body's text) -> Respond to Webhook (the item), imported with `n8n
// import:workflow` and published with `n8n publish:workflow` before it starts, so its production
// webhook answers when the last node finishes: what our 3-node echo run with `Prefer: wait` answers.
import { randomBytes } from 'node:crypto';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/support/processes.ts';
import { onCleanup, spawnNode } from '../processes.ts';

/**
 * Pinned. 2.41.3 (the latest when this was written) does not install from the registry here: its
 * @n8n/agents@0.26.2 is not published there (npm ETARGET); 2.40.7 resolves whole.
 */
export const N8N_VERSION = '2.40.7';
/** As bench/hydra/build.sh: OPENAUTH_BENCH_CACHE moves ~/.cache/openauth-bench; N8N_BENCH_DIR names n8n's own folder. */
const CACHE =
  process.env.N8N_BENCH_DIR ??
  path.join(process.env.OPENAUTH_BENCH_CACHE ?? path.join(homedir(), '.cache', 'openauth-bench'), 'n8n');
const BIN = path.join(CACHE, 'node_modules', 'n8n', 'bin', 'n8n');
const WEBHOOK_PATH = 'bench-echo';
const WORKFLOW_ID = 'BenchEcho0000001';
const START_TIMEOUT_MS = 180_000;

export interface N8nInstance {
  /** The production webhook: POST {"text": ...}, answered {"text": ...} by the last node. */
  webhookUrl: string;
  pids: number[];
  stop(): Promise<void>;
}

const SQLITE_BINDING = path.join(CACHE, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');

function installed(): boolean {
  const file = path.join(CACHE, 'node_modules', 'n8n', 'package.json');
  return (
    existsSync(file) &&
    (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version === N8N_VERSION &&
    existsSync(SQLITE_BINDING)
  );
}

/** The environment with this Node first on the PATH: npm (the one on the PATH) then runs, and builds sqlite3, with it. */
function withThisNode(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
}

/**
 * n8n N8N_VERSION in the cache, installed on first use (about 5 minutes and 2.8 GB), or why not.
 * --ignore-scripts: the Kafka node's @confluentinc/kafka-javascript builds librdkafka from sources
 * it downloads (zlib.net, github.com), which fails offline and fails the whole install. Of the
 * install scripts, this workflow needs only sqlite3's: its prebuilt binary is a GitHub download too,
 * so `npm rebuild sqlite3` compiles it (node-gyp, N-API). isolated-vm (n8n's expression engine)
 * ships its Node 24 binary in the package.
 */
function ensureInstalled(): string | undefined {
  if (installed()) return undefined;
  console.error(`  installing n8n ${N8N_VERSION} into ${CACHE} (once; about 5 minutes)…`);
  mkdirSync(CACHE, { recursive: true });
  for (const args of [
    ['install', '--prefix', CACHE, `n8n@${N8N_VERSION}`, '--ignore-scripts', '--no-audit', '--no-fund'],
    ['rebuild', 'sqlite3', '--prefix', CACHE],
  ]) {
    // --loglevel=error: its thousands of peer-dependency warnings would fill any buffer.
    const result = spawnSync('npm', [...args, '--loglevel=error'], {
      encoding: 'utf8',
      env: withThisNode(),
      cwd: CACHE,
      stdio: ['ignore', 'ignore', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.status !== 0) {
      const why =
        result.error?.message ??
        result.stderr
          .split('\n')
          .filter((l) => /error/i.test(l))
          .slice(0, 2)
          .join(' ');
      return `n8n ${N8N_VERSION} could not be installed (npm ${args.filter((a) => !a.startsWith('-') && a !== CACHE).join(' ')}): ${why || `exit ${result.status ?? result.signal}`}`;
    }
  }
  return installed()
    ? undefined
    : `n8n ${N8N_VERSION} could not be installed: no ${SQLITE_BINDING} after npm rebuild sqlite3`;
}

/** Three nodes, as n8n's editor would save them: the webhook answers from the Respond node. */
export function echoWorkflow(): Record<string, unknown> {
  const node = (
    name: string,
    type: string,
    typeVersion: number,
    x: number,
    parameters: Record<string, unknown>,
    extra = {},
  ) => ({ id: randomBytes(8).toString('hex'), name, type, typeVersion, position: [x, 0], parameters, ...extra });
  return {
    id: WORKFLOW_ID,
    name: 'Bench echo',
    active: false,
    settings: { executionOrder: 'v1' },
    connections: {
      Webhook: { main: [[{ node: 'Echo', type: 'main', index: 0 }]] },
      Echo: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] },
    },
    nodes: [
      node(
        'Webhook',
        'n8n-nodes-base.webhook',
        2,
        0,
        { httpMethod: 'POST', path: WEBHOOK_PATH, responseMode: 'responseNode', options: {} },
        { webhookId: WEBHOOK_PATH },
      ),
      node('Echo', 'n8n-nodes-base.set', 3.4, 200, {
        mode: 'manual',
        assignments: { assignments: [{ id: 'text', name: 'text', value: '={{ $json.body.text }}', type: 'string' }] },
        options: {},
      }),
      node('Respond', 'n8n-nodes-base.respondToWebhook', 1.1, 400, { respondWith: 'firstIncomingItem', options: {} }),
    ],
  };
}

/** n8n's environment: its own folder and database, loopback only, nothing that calls home. */
function n8nEnv(userFolder: string, port: number): NodeJS.ProcessEnv {
  const { BASE_URL: _unused, DATABASE_URL: _store, QUEUE_URL: _queue, ...inherited } = process.env;
  return {
    ...inherited,
    NODE_ENV: 'production',
    N8N_USER_FOLDER: userFolder,
    N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_HOST: '127.0.0.1',
    N8N_PROTOCOL: 'http',
    N8N_WEBHOOK_URL: `http://127.0.0.1:${port}/`,
    N8N_SECURE_COOKIE: 'false',
    N8N_LOG_LEVEL: 'warn',
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_HIRING_BANNER_ENABLED: 'false',
    N8N_DYNAMIC_BANNERS_ENABLED: 'false',
    N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
    N8N_COMMUNITY_PACKAGES_ENABLED: 'false',
    N8N_PUBLIC_API_DISABLED: 'true',
    // Its MCP server registry refreshes from api.n8n.io in the background.
    N8N_DISABLED_MODULES: 'mcp-registry',
  };
}

function cli(env: NodeJS.ProcessEnv, ...args: string[]): string | undefined {
  const result = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: START_TIMEOUT_MS });
  return result.status === 0
    ? undefined
    : `n8n ${args[0]} failed (${result.status}): ${`${result.stdout}${result.stderr}`.trim().split('\n').slice(-2).join(' ')}`;
}

async function waitForWebhook(url: string, child: ChildProcess, output: () => string): Promise<string | undefined> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      return `n8n exited with ${child.exitCode}: ${output().trim().split('\n').slice(-2).join(' ')}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"warm-up"}',
    }).catch(() => undefined);
    // While it starts it answers 200 with a plain "n8n is starting up" page: only the echo counts.
    if (res?.status === 200 && (await res.text()) === '{"text":"warm-up"}') return undefined;
    await new Promise((r) => setTimeout(r, 500));
  }
  return `n8n's webhook did not answer within ${START_TIMEOUT_MS / 1000} s: ${output().trim().split('\n').slice(-2).join(' ')}`;
}

/** A fresh n8n with the echo workflow published, its webhook answering; or one line saying why not. */
export async function startN8n(): Promise<N8nInstance | string> {
  const notInstalled = ensureInstalled();
  if (notInstalled) return notInstalled;
  const userFolder = await mkdtemp(path.join(tmpdir(), 'oa-bench-n8n-'));
  await chmod(userFolder, 0o700);
  onCleanup(() => rm(userFolder, { recursive: true, force: true }));
  const port = await freePort();
  const env = n8nEnv(userFolder, port);
  const file = path.join(userFolder, 'workflow.json');
  await writeFile(file, JSON.stringify([echoWorkflow()]));
  const failed = cli(env, 'import:workflow', `--input=${file}`) ?? cli(env, 'publish:workflow', `--id=${WORKFLOW_ID}`);
  if (failed) return failed;
  let text = '';
  const child = spawnNode([BIN, 'start'], { env });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await once(child, 'exit');
    clearTimeout(killer);
    // At N8N_LOG_LEVEL=warn it prints deprecation notices and what went wrong: the latter is shown,
    // as the service's errors are (the Python task runner has no virtualenv here; no node uses it).
    const problems = text.split('\n').filter((l) => /error|fail/i.test(l) && !/Python task runner/.test(l));
    if (problems.length)
      console.error(`n8n printed ${problems.length} error lines, e.g.:\n${problems.slice(0, 3).join('\n')}`);
  };
  onCleanup(stop);
  const webhookUrl = `http://127.0.0.1:${port}/webhook/${WEBHOOK_PATH}`;
  const notReady = await waitForWebhook(webhookUrl, child, () => text);
  if (notReady) {
    await stop();
    return notReady;
  }
  return { webhookUrl, pids: [child.pid!], stop };
}
