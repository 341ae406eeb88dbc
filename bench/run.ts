// `npm run bench`: the service as an operator runs it (MariaDB store, PostgreSQL queue,
// NODE_ENV=production, LOG_LEVEL=warn) in its own process, data prepared through the admin CLI and
// the real OAuth flow, each load from another process (bench/load.ts) on loopback, and one table.
// Loads 1 and 3 also run against panva/oidc-provider (bench/peer.ts); the table divides ours by it.
//
//   npm run bench -- [--duration 10] [--connections 32] [--only 1,3,4,8,ref] [--poll-ms 5] [--repeat 1] [--profile DIR]
//
// --repeat N runs the whole bench N times, each from scratch (fresh databases, service and peer),
// and prints the median of each row (and the median of each run's ours ÷ peer): on a shared VM
// single runs minutes apart differ by up to 2x.
//
// `ref` rows: the same load against do-nothing servers (bare node:http and bare Express), for scale;
// rows 4 and 5 are divided by bare Express's req/s of the same run (issue 19's goal for them).
//
// --profile starts the service with --cpu-prof and leaves its .cpuprofile in DIR when it stops
// (pair it with --only to profile one load). Never part of `npm test` or CI.
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { Browser, formFields, logIn } from '../test/support/oauthFlow.ts';
import type { LoadResult, LoadSpec } from './types.ts';
import { isolationRows } from './isolation.ts';
import { freePort, provisionThroughCli, waitForReady } from '../test/support/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    'poll-ms': { type: 'string', default: '5' },
    profile: { type: 'string' },
    repeat: { type: 'string', default: '1' },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const POLL_MS = Number(args['poll-ms']);
/** Rows 7 and 7b's `Prefer: wait`: far above a run's seconds, so the POST answers with the ended run. */
const RUN_WAIT_SECONDS = 30;
const REPEAT = Math.max(1, Number(args.repeat));
const ONLY = args.only ? new Set(args.only.split(',').map((s) => s.trim())) : undefined;
const wanted = (load: string) => !ONLY || ONLY.has(load);

const LOGIN = 'bench';
const PASSWORD = 'bench-password-1';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const THREE_NODE_WORKFLOW = {
  name: 'Bench summarize',
  description: 'text_input -> llm_call (echo) -> text_output',
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    { id: 'llm', type: 'llm_call', config: { model: 'echo', temperature: 0, max_tokens: 64 } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'llm' },
    { from: 'llm', to: 'out' },
  ],
};

// ---------------------------------------------------------------------------------------------
// Processes

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

function startMariaDb(): string {
  const result = spawnSync('sh', ['scripts/mariadb.sh'], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`scripts/mariadb.sh failed: ${result.stderr}`);
  return result.stdout.trim().split('\n').pop()!;
}

async function freshMysqlDatabase(url: string, name: string): Promise<string> {
  const conn = await mysql.createConnection(url);
  await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await conn.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

interface Service {
  baseUrl: string;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

async function startService(databaseUrl: string, queueUrl: string): Promise<Service> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const { BASE_URL: _unused, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    NODE_ENV: 'production',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    DATABASE_URL: databaseUrl,
    QUEUE_URL: queueUrl,
    // 120 a minute per client is the production default; the loads send thousands a second.
    TOKEN_RATE_LIMIT_PER_MINUTE: '1000000',
    API_RATE_LIMIT_PER_MINUTE: '100000000',
    // One bench user starts runs from 32 connections: the per-user run quotas would answer most 429.
    USER_MAX_CONCURRENT_RUNS: '1000000',
    USER_RUNS_PER_MINUTE: '1000000',
  };
  const flags = args.profile ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(args.profile)] : [];
  let text = '';
  const child = spawn(process.execPath, [...flags, 'src/main.ts'], { cwd: root, env });
  children.push(child);
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  await waitForReady(`${baseUrl}/readyz`, child, () => text);
  return {
    baseUrl,
    env,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      const problems = text.split('\n').filter((l) => /"level":(50|60)/.test(l));
      if (problems.length) console.error(`the service logged ${problems.length} errors, e.g.:\n${problems.slice(0, 3).join('\n')}`);
    },
  };
}

interface Peer {
  tokenUrl: string;
  userinfoUrl: string;
  clientId: string;
  clientSecret: string;
  refreshTokens: string[];
  accessToken: string;
}

/** A fresh peer per load: its in-memory adapter keeps only the last 1,000 entries. */
async function startPeer(): Promise<Peer & { stop(): void }> {
  const child = spawn(process.execPath, ['bench/peer.ts', String(await freePort()), String(CONNECTIONS)], { cwd: root, env: { ...process.env, NODE_ENV: 'production' } });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ ...(JSON.parse(out.slice(0, nl)) as Peer), stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`the peer exited with ${code}: ${err}`)));
  });
}

async function load(spec: LoadSpec): Promise<LoadResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'oa-bench-load-'));
  const file = path.join(dir, 'spec.json');
  await writeFile(file, JSON.stringify(spec));
  const child = spawn(process.execPath, ['bench/load.ts', file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = (await once(child, 'exit')) as [number];
  await rm(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the load generator failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}

// ---------------------------------------------------------------------------------------------
// OAuth: codes through the real authorize endpoint

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/**
 * One code, the way a browser gets it: the consent page, then the Allow answer; the code is in the
 * Location. `prompt=consent`: the grant is remembered after the first Allow, and the bench keeps
 * minting through the page as before.
 */
async function mintCode(browser: Browser, clientId: string, scope: string): Promise<string> {
  const url = new URL('/oauth/authorize', browser.baseUrl);
  url.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope, state: 'bench', prompt: 'consent' }).toString();
  const consent = await browser.fetch(url.toString());
  if (consent.status !== 200) throw new Error(`expected the consent page, got ${consent.status}`);
  const answer = await browser.post('/oauth/authorize/decision', { ...formFields(await consent.text()), decision: 'allow' });
  const code = new URL(answer.headers.get('location') ?? 'x:').searchParams.get('code');
  if (answer.status !== 303 || !code) throw new Error(`expected a redirect with a code, got ${answer.status}`);
  return code;
}

async function mintCodes(browser: Browser, clientId: string, scope: string, count: number): Promise<string[]> {
  const codes: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        next += 1;
        codes.push(await mintCode(browser, clientId, scope));
      }
    }),
  );
  return codes;
}

async function exchange(baseUrl: string, auth: string, code: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await fetch(`${baseUrl}/api/open/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }).toString(),
  });
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  if (!res.ok) throw new Error(`code exchange failed: ${JSON.stringify(body)}`);
  return body;
}

// ---------------------------------------------------------------------------------------------
// The table

type Row = { name: string; result: LoadResult | string; ratio?: number; target?: string };
/** The rows of the run in progress. */
let rows: Row[] = [];

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function median<T>(values: T[], key: (v: T) => number): T {
  return [...values].sort((a, b) => key(a) - key(b))[Math.floor((values.length - 1) / 2)]!;
}

/** Per row, the run with the median req/s (its p50 and p99 with it), and the median ratio. */
function medianRows(runs: Row[][]): Row[] {
  return runs[0]!.map((first) => {
    const measured = runs.map((run) => run.find((r) => r.name === first.name)).filter((r): r is Row => r !== undefined && typeof r.result !== 'string');
    if (measured.length === 0) return first;
    const ratios = measured.map((r) => r.ratio).filter((x): x is number => x !== undefined);
    const row: Row = { ...first, result: median(measured, (r) => (r.result as LoadResult).rps).result };
    if (ratios.length) row.ratio = median(ratios, (x) => x);
    return row;
  });
}

function printTable(table: Row[]): void {
  const header = ['load', 'req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'ours ÷ peer (÷ Express)', 'target (issue 19)'];
  const ratio = (r: Row) => (r.ratio === undefined ? '' : `${fmt(r.ratio, 2)}x`);
  const lines = table.map((r) =>
    typeof r.result === 'string'
      ? [r.name, r.result, '', '', '', '', r.target ?? '']
      : [r.name, fmt(r.result.rps, 0), fmt(r.result.p50), fmt(r.result.p99), String(r.result.errors), ratio(r), r.target ?? ''],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const l of lines) console.log(line(l));
  const notes = table.filter((r) => typeof r.result !== 'string' && r.result.note);
  for (const r of notes) console.log(`  ${r.name}: ${(r.result as LoadResult).note}`);
}

function record(name: string, result: LoadResult | string, extra: Omit<Row, 'name' | 'result'> = {}): void {
  rows.push({ name, result, ...extra });
  const shown = typeof result === 'string' ? result : `${fmt(result.rps, 0)} req/s, p50 ${fmt(result.p50)} ms, p99 ${fmt(result.p99)} ms, ${result.errors} errors`;
  console.error(`  ${name}: ${shown}`);
}

const NOT_AVAILABLE = 'n/a (endpoint not available)';
/** Whether a path is served at all (not a 404/405/501 from a route that does not exist yet). */
const available = (status: number) => status !== 404 && status !== 405 && status !== 501;

// ---------------------------------------------------------------------------------------------

async function runOnce(): Promise<void> {
  const common = { connections: CONNECTIONS, durationSeconds: DURATION };
  console.error(`bench: ${CONNECTIONS} connections, ${DURATION} s per load, ${cpus().length} CPUs`);

  console.error('starting MariaDB, the queue PostgreSQL, the service and the peer…');
  const databaseUrl = await freshMysqlDatabase(startMariaDb(), 'bench');
  const pgDir = await mkdtemp(path.join(tmpdir(), 'oa-bench-pg-'));
  await chmod(pgDir, 0o755); // the cluster runs as its own OS user when we are root
  cleanups.push(() => rm(pgDir, { recursive: true, force: true }));
  const pg = await startEmbeddedPostgres({ dataDir: path.join(pgDir, 'pg'), port: await freePort(), database: 'bench_queue', persistent: false });
  cleanups.unshift(() => pg.stop());
  const service = await startService(databaseUrl, pg.url);
  cleanups.unshift(() => service.stop());
  const { baseUrl, env } = service;

  console.error('provisioning through the admin CLI and the OAuth flow…');
  const { app, key } = provisionThroughCli(env, { label: 'Bench', login: LOGIN, password: PASSWORD, redirectUri: REDIRECT_URI, appDescription: 'npm run bench' });
  const clientAuth = basic(app.client_id, app.client_secret);
  const browser = new Browser(baseUrl);
  const loggedIn = await logIn(browser, LOGIN, PASSWORD);
  if (loggedIn.status !== 303) throw new Error(`login failed with ${loggedIn.status}`);
  const tokenUrl = `${baseUrl}/api/open/oauth/token`;
  const scope = 'user_info api_key';
  const [first, ...chainCodes] = await mintCodes(browser, app.client_id, scope, CONNECTIONS + 1);
  const bearer = (await exchange(baseUrl, clientAuth, first!)).access_token;
  const auth = { authorization: `Bearer ${bearer}` };

  // 1. Refresh grant with rotation: each chain sends the refresh token it was just given.
  if (wanted('1')) {
    const refreshTokens = await Promise.all(chainCodes.map(async (c) => (await exchange(baseUrl, clientAuth, c)).refresh_token));
    const ours = await load({ kind: 'refresh', ...common, url: tokenUrl, authorization: clientAuth, refreshTokens });
    const peer = await startPeer();
    const theirs = await load({ kind: 'refresh', ...common, url: peer.tokenUrl, authorization: basic(peer.clientId, peer.clientSecret), refreshTokens: peer.refreshTokens });
    peer.stop();
    record('1. refresh grant (rotation)', ours, { ratio: ours.rps / theirs.rps, target: '≥ 1.0x peer' });
    record('   peer: oidc-provider refresh', theirs);
  }

  // 2. Code exchange: codes minted beforehand (they live 300 s); enough for the duration at the
  // refresh grant's pace three times over, at most 30,000.
  if (wanted('2')) {
    const pace = rows.find((r) => r.name.startsWith('1.'))?.result;
    const count = Math.min(30_000, Math.ceil((typeof pace === 'object' ? pace.rps : 1500) * DURATION * 3));
    const t0 = performance.now();
    const codes = await mintCodes(browser, app.client_id, scope, count);
    console.error(`  minted ${codes.length} codes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    record('2. code exchange', await load({ kind: 'codes', ...common, url: tokenUrl, authorization: clientAuth, redirectUri: REDIRECT_URI, codes }));
  }

  // 3. User info.
  if (wanted('3')) {
    const ours = await load({ kind: 'fixed', ...common, url: `${baseUrl}/api/open/v1/userinfo`, method: 'GET', headers: auth });
    const peer = await startPeer();
    const theirs = await load({ kind: 'fixed', ...common, url: peer.userinfoUrl, method: 'GET', headers: { authorization: `Bearer ${peer.accessToken}` } });
    peer.stop();
    record('3. GET userinfo', ours, { ratio: ours.rps / theirs.rps, target: '≥ 1.2x peer' });
    record('   peer: oidc-provider userinfo', theirs);
  }

  // 4. Token detail (issues and signs a proxy token).
  const detailUrl = `${baseUrl}/api/open/v1/${LOGIN}/tokens/${key.id}`;
  const detail = await fetch(detailUrl, { headers: auth });
  const proxyToken = detail.ok ? ((await detail.json()) as { proxy_access_token?: string }).proxy_access_token : undefined;
  if (wanted('4')) {
    record('4. GET token detail (proxy JWT)', available(detail.status) ? await load({ kind: 'fixed', ...common, url: detailUrl, method: 'GET', headers: auth }) : NOT_AVAILABLE, { target: '≥ 0.40x bare Express' });
  }

  // 5. The gateway with a proxy token on the built-in echo model.
  if (wanted('5')) {
    const chatUrl = `${baseUrl}/serverless/v1/chat/completions`;
    const chatBody = JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] });
    const chatHeaders = { authorization: `Bearer ${proxyToken ?? 'none'}`, 'content-type': 'application/json' };
    const probe = proxyToken ? await fetch(chatUrl, { method: 'POST', headers: chatHeaders, body: chatBody }) : undefined;
    record('5. POST chat/completions (proxy)', probe && available(probe.status) ? await load({ kind: 'fixed', ...common, url: chatUrl, method: 'POST', headers: chatHeaders, body: chatBody }) : NOT_AVAILABLE, { target: '≥ 0.40x bare Express' });
  }

  // 6. Workflows: create, then list a page.
  const keyHeaders = { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' };
  if (wanted('6')) {
    record('6a. POST /api/workflows', await load({ kind: 'fixed', ...common, url: `${baseUrl}/api/workflows`, method: 'POST', headers: keyHeaders, body: JSON.stringify(THREE_NODE_WORKFLOW) }));
    record('6b. GET /api/workflows?per_page=20', await load({ kind: 'fixed', ...common, url: `${baseUrl}/api/workflows?per_page=20`, method: 'GET', headers: keyHeaders }));
  }

  // 7. Runs of the three-node workflow, POST .../run to `completed`. Rows 7 and 7b: a client that
  // asks the POST to wait for the end (`Prefer: wait`, one request per run); rows 7p and 7bp: the
  // same runs as a client polling GET every --poll-ms sees them (rows 7 and 7b until issue 19's
  // third pass). Both in one run tell the client's share of the latency from the service's.
  if (wanted('7')) {
    const created = await fetch(`${baseUrl}/api/workflows`, { method: 'POST', headers: keyHeaders, body: JSON.stringify(THREE_NODE_WORKFLOW) });
    const workflowId = ((await created.json()) as { data: { id: string } }).data.id;
    const probe = await fetch(`${baseUrl}/api/workflows/${workflowId}/run`, { method: 'POST', headers: keyHeaders, body: JSON.stringify({ inputs: { text: 'warm-up' } }) });
    const runs = (connections: number, client: 'wait' | 'poll', durationSeconds = DURATION) =>
      probe.status !== 202
        ? NOT_AVAILABLE
        : load({
            kind: 'runs', ...common, durationSeconds, connections, baseUrl, apiKey: key.token, workflowId, inputs: { text: 'Summarize the benchmark.' },
            pollMs: POLL_MS, waitSeconds: client === 'wait' ? RUN_WAIT_SECONDS : undefined,
          });
    // Not recorded: a second of each client first. The runs' code (and the queue's) is cold after
    // the probe, and the first load measured paid for it: 0.7-0.8x of the same load run second.
    await runs(CONNECTIONS, 'wait', 1);
    await runs(CONNECTIONS, 'poll', 1);
    record('7. three-node runs (runs/s), Prefer: wait', await runs(CONNECTIONS, 'wait'), { target: '≥ 2x 95 runs/s (3280b19)' });
    // The same with 4 clients: a run's latency when it does not queue behind 31 others (closed loop:
    // at 32 clients, runs/s × p50 ≈ 32 whatever the pipeline's own latency is).
    record('7b. three-node runs, 4 clients, Prefer: wait', await runs(4, 'wait'), { target: 'p50 ≤ 15 ms' });
    record('7p. three-node runs (runs/s), polling', await runs(CONNECTIONS, 'poll'));
    record('7bp. three-node runs, 4 clients, polling', await runs(4, 'poll'));
  }

  // For scale: the same load against servers that do nothing (bench/ceiling.ts).
  if (wanted('ref')) {
    const [nodePort, expressPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, ['bench/ceiling.ts', String(nodePort), String(expressPort)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await once(child.stdout, 'data');
    record('ref. bare node:http, static JSON', await load({ kind: 'fixed', ...common, url: `http://127.0.0.1:${nodePort}/hello`, method: 'GET', headers: {} }));
    const express = await load({ kind: 'fixed', ...common, url: `http://127.0.0.1:${expressPort}/hello`, method: 'GET', headers: {} });
    record('ref. bare Express 5, static JSON', express);
    // Rows 4 and 5 as a share of what Express does answering a constant, in the same run.
    for (const row of rows) {
      if ((row.name.startsWith('4.') || row.name.startsWith('5.')) && typeof row.result === 'object') row.ratio = row.result.rps / express.rps;
    }
    child.kill('SIGTERM');
  }

  // 8. Another user's latency, idle and under one user's heavy runs (bench/isolation.ts); last, as
  // the heavy runs' compute processes keep a core busy until cancelled.
  if (wanted('8')) await isolationRows({ baseUrl, env, durationSeconds: DURATION, load, record });
}

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch((err: unknown) => console.error(err));
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
}

const started = new Date();
const runs: Row[][] = [];
try {
  for (let run = 1; run <= REPEAT; run += 1) {
    if (REPEAT > 1) console.error(`run ${run} of ${REPEAT}`);
    rows = [];
    await runOnce();
    runs.push(rows);
    await cleanUp();
  }
} finally {
  await cleanUp();
}
const repeated = REPEAT > 1 ? `, median of ${REPEAT} runs` : '';
console.log(`\nnpm run bench, ${started.toISOString()}: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${CONNECTIONS} connections, ${DURATION} s per load${repeated}, MariaDB store + PostgreSQL queue, service and load generator on the same machine\n`);
printTable(medianRows(runs));
