// Ory Hydra for the bench's peer of loads 1 and 3 (bench/peers/hydra.ts): the binary built from
// the Go module proxy (bench/hydra/build.sh, cached outside the repo), a database migrated by
// Hydra, `hydra serve all --dev`, one confidential client (client_secret_basic), and the tokens the
// loads need minted through a real authorization-code flow whose login and consent the bench
// accepts through Hydra's admin API (bench/hydra/flow.ts).
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitForReady } from '../../test/support/processes.ts';
import { freshPgDatabase } from '../processes.ts';
import { HYDRA_VERSION, hydraDsn, hydraEnv, shortReason } from './config.ts';
import type { MintedTokens } from '../peers/types.ts';
import { createClient, mintTokens } from './flow.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const DATABASE = 'hydra_bench';
/** As our service's pool (src/db/connect.ts). */
const POOL = 10;
/**
 * Hydra's system secret, the same for every Hydra this bench process starts: it encrypts the
 * signing keys Hydra stores, so a second Hydra on the same database with another secret fails.
 */
const SECRET = randomBytes(24).toString('hex');

/** What loads 1 and 3 need of a peer, as bench/peer.ts prints it, and Hydra's process. */
export interface HydraPeer extends MintedTokens {
  pid: number;
  stop(): Promise<void>;
}

/** Runs a command to its end: its exit code and what it wrote. */
async function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string }> {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.on('error', (e) => (err += `\n${e.message}`)); // not found, not executable: 'close' follows
  const [code] = (await once(child, 'close')) as [number | null];
  return { code: code ?? 1, out, err };
}

const lastLine = (text: string) => text.trim().split('\n').filter(Boolean).pop() ?? '';

let binary: Promise<{ bin: string } | { skip: string }> | undefined;

/**
 * Hydra's binary, built on the first call of the first run (minutes; later runs reuse the cache),
 * or why it cannot be had: the bench then skips the Hydra rows with that one line.
 */
export function hydraBinary(): Promise<{ bin: string } | { skip: string }> {
  binary ??= (async () => {
    console.error(
      `Hydra ${HYDRA_VERSION}: the cached binary, or a build from the Go module proxy (bench/hydra/build.sh; the first build takes minutes)…`,
    );
    const built = await run('sh', [path.join(here, 'build.sh')], process.env);
    if (built.code !== 0) {
      console.error(built.err);
      return {
        skip: `Hydra ${HYDRA_VERSION} not built (bench/hydra/build.sh: ${shortReason(lastLine(built.err) || `exit ${built.code}`)})`,
      };
    }
    return { bin: lastLine(built.out) };
  })();
  return binary;
}

/**
 * A fresh database for Hydra on the cluster whose maintenance URL is `adminUrl`, migrated by Hydra
 * itself (`hydra migrate sql up`): Hydra's DSN for it.
 */
export async function migratedDatabase(bin: string, adminUrl: string): Promise<string> {
  await freshPgDatabase(adminUrl, DATABASE);
  const dsn = hydraDsn(adminUrl, DATABASE, POOL);
  const migrated = await run(bin, ['migrate', 'sql', 'up', '-e', '--yes'], { ...process.env, DSN: dsn });
  if (migrated.code !== 0)
    throw new Error(`hydra migrate sql up failed: ${lastLine(migrated.err) || lastLine(migrated.out)}`);
  return dsn;
}

/** Hydras still running: killed if the bench exits before stopping one (a failed load, Ctrl-C). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

async function stopChild(child: ChildProcess): Promise<void> {
  live.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/**
 * Starts Hydra on the migrated database `dsn` and mints `chains` refresh tokens (scope
 * offline_access, as the other rows' chains) and one access token for user info (openid profile).
 * Throws when Hydra does not start; the caller records the reason.
 */
export async function startHydra(bin: string, dsn: string, chains: number): Promise<HydraPeer> {
  const [publicPort, adminPort] = [await freePort(), await freePort()];
  const env = { ...process.env, ...hydraEnv({ dsn, publicPort, adminPort, secret: SECRET }) };
  const child = spawn(bin, ['serve', 'all', '--dev', '--sqa-opt-out'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const publicUrl = `http://127.0.0.1:${publicPort}`;
  const adminUrlHttp = `http://127.0.0.1:${adminPort}`;
  try {
    await waitForReady(`${adminUrlHttp}/health/ready`, child, () => text);
    await waitForReady(`${publicUrl}/health/ready`, child, () => text);
    const client = await createClient(adminUrlHttp);
    const urls = { publicUrl, adminUrl: adminUrlHttp };
    const refreshTokens: string[] = [];
    for (let i = 0; i < chains; i += 1)
      refreshTokens.push((await mintTokens(urls, client, 'offline_access')).refresh_token!);
    const { access_token: accessToken } = await mintTokens(urls, client, 'openid profile');
    return {
      tokenUrl: `${publicUrl}/oauth2/token`,
      userinfoUrl: `${publicUrl}/userinfo`,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      refreshTokens,
      accessToken,
      pid: child.pid!,
      stop: () => stopChild(child),
    };
  } catch (err) {
    await stopChild(child);
    throw new Error(`${(err as Error).message}\n${text.split('\n').slice(-5).join('\n')}`);
  }
}
