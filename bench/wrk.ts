// The bench's second, independent load generator: wrk (Debian's `wrk`, C, HdrHistogram latencies),
// run from the bench's own process, so its CPU is counted as the load generator's like bench/load.ts's.
// A gain that only one of the two clients shows is then visible in the table: rows 1 and 3 print a
// wrk row beside the bench's own, for ours and for oidc-provider.
//
// Refresh chains: bench/wrk/load.lua with one thread per connection, each sending the refresh token
// its previous answer gave. Fixed requests: wrk's static request over 2 threads (the bench's cores).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './processes.ts';
import type { LoadResult } from './types.ts';

export type WrkSpec = { connections: number; durationSeconds: number; url: string } & (
  | { kind: 'refresh'; authorization: string; refreshTokens: string[] }
  | { kind: 'fixed'; headers: Record<string, string> }
);

/** Why wrk cannot run here (shown in its rows; the bench goes on), or undefined when it can. */
export function wrkMissing(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  return found.status === 0 ? undefined : 'skipped: wrk not on PATH (apt-get install wrk)';
}

const SCRIPT = path.join(root, 'bench/wrk/load.lua');
/** wrk's threads for fixed requests: one per core of this 2-core machine, each with connections ÷ 2. */
const FIXED_THREADS = 2;

export async function wrkLoad(spec: WrkSpec): Promise<LoadResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'oa-bench-wrk-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // wrk's own timeout (2 s) abandons a slow request and sends the chain's token again on a new
    // connection, which a rotating server refuses: on a busy machine that broke chains that were fine.
    const args = ['--latency', '--timeout', '30s', '-d', `${spec.durationSeconds}s`, '-s', SCRIPT];
    if (spec.kind === 'refresh') {
      if (spec.refreshTokens.length < spec.connections)
        throw new Error(`wrk refresh load: ${spec.refreshTokens.length} refresh tokens for ${spec.connections} chains`);
      const file = path.join(dir, 'tokens');
      await writeFile(file, spec.refreshTokens.slice(0, spec.connections).join('\n') + '\n');
      env.WRK_REFRESH_TOKENS = file;
      env.WRK_REFRESH_AUTHORIZATION = spec.authorization;
      args.push('-t', String(spec.connections), '-c', String(spec.connections));
    } else {
      args.push('-t', String(FIXED_THREADS), '-c', String(spec.connections));
      for (const [name, value] of Object.entries(spec.headers)) args.push('-H', `${name}: ${value}`);
    }
    args.push(spec.url);
    const child = spawn('wrk', args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const [code] = (await once(child, 'exit')) as [number];
    const line = out.split('\n').find((l) => l.startsWith('WRK_RESULT '));
    if (code !== 0 || !line) throw new Error(`wrk failed (${code}): ${err || out}`);
    const r = JSON.parse(line.slice('WRK_RESULT '.length)) as {
      requests: number;
      micros: number;
      p50: number;
      p99: number;
      errors: number;
      broken: number;
    };
    const seconds = r.micros / 1e6;
    return {
      requests: r.requests,
      rps: r.requests / seconds,
      p50: r.p50,
      p99: r.p99,
      errors: r.errors,
      seconds,
      note: r.broken ? `${r.broken} of ${spec.connections} chains broke (refused token), the rest ran on` : undefined,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
