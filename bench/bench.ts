// What every row group of `npm run bench` gets: the options, the stores and the service of this
// run, the bench user provisioned through the admin CLI and the real OAuth flow, the load generator
// and the rows. A row group (bench/rows/*.ts) is registered in bench/run.ts's list.
import { Browser, logIn } from '../test/support/oauthFlow.ts';
import { provisionThroughCli } from '../test/support/processes.ts';
import { basic, exchange, mintCodes, REDIRECT_URI } from './oauthFlow.ts';
import type { Options } from './options.ts';
import type { Probes } from './probes.ts';
import { load, type Service, type Stores } from './processes.ts';
import type { RowExtra, RunRows } from './table.ts';
import type { LoadResult, LoadSpec } from './types.ts';
import { usageBetween } from './usage.ts';
import { wrkLoad, type WrkSpec } from './wrk.ts';

export interface Bench {
  options: Options;
  /** A load's connections and duration at the bench's settings. */
  common: { connections: number; durationSeconds: number };
  stores: Stores;
  service: Service;
  /** The bench user's login, OAuth app (client_secret_basic as `clientAuth`) and API key. */
  user: {
    login: string;
    app: { client_id: string; client_secret: string };
    clientAuth: string;
    key: { id: number; token: string };
    /** Logged in, for minting more codes through the authorize endpoint. */
    browser: Browser;
    scope: string;
    /** An access token of the user (`scope`). */
    bearer: string;
    /** `connections` codes not exchanged yet: one refresh chain each. */
    chainCodes: string[];
  };
  /**
   * Runs a load from its own process; its result says where the time went (`usage`). `peerPids`:
   * the processes of a peer under this load, whose CPU (their trees') is counted as the peer's.
   */
  load(spec: LoadSpec, opts?: { peerPids?: number[] }): Promise<LoadResult>;
  /** The same with wrk (bench/wrk.ts), the second generator; its CPU is the load generator's too. */
  wrk(spec: WrkSpec, opts?: { peerPids?: number[] }): Promise<LoadResult>;
  probes: Probes;
  record(name: string, result: LoadResult | string, extra?: RowExtra): void;
  rows: RunRows;
}

/** Rows of the table measured together (`ids`: the --only names they answer to, e.g. ['1', '3']). */
export interface RowGroup {
  ids: string[];
  run(bench: Bench): Promise<void>;
}

const LOGIN = 'bench';
/** PostgreSQL's statistics reach pg_stat_database within a second of a transaction (PGSTAT_MIN_INTERVAL). */
const PG_STATS_SETTLE_MS = 1100;
const PASSWORD = 'load-test-passphrase-1';

/** Runs a load between two snapshots of the probes: its result says where the time went. */
async function measured(probes: Probes, run: () => Promise<LoadResult>, peerPids: number[] = []): Promise<LoadResult> {
  const before = await probes.snapshot(0, peerPids);
  const result = await run();
  const after = await probes.snapshot(PG_STATS_SETTLE_MS, peerPids);
  return { ...result, usage: usageBetween(before, after, result.requests, probes.ticksPerSecond) };
}

export async function provision(
  options: Options,
  stores: Stores,
  service: Service,
  probes: Probes,
  rows: RunRows,
): Promise<Bench> {
  const { baseUrl, env } = service;
  const { app, key } = provisionThroughCli(env, {
    label: 'Bench',
    login: LOGIN,
    password: PASSWORD,
    redirectUri: REDIRECT_URI,
    appDescription: 'npm run bench',
  });
  const clientAuth = basic(app.client_id, app.client_secret);
  const browser = new Browser(baseUrl);
  const loggedIn = await logIn(browser, LOGIN, PASSWORD);
  if (loggedIn.status !== 303) throw new Error(`login failed with ${loggedIn.status}`);
  const scope = 'user_info api_key';
  const [first, ...chainCodes] = await mintCodes(browser, app.client_id, scope, options.connections + 1);
  const bearer = (await exchange(baseUrl, clientAuth, first!)).access_token;
  return {
    options,
    common: { connections: options.connections, durationSeconds: options.durationSeconds },
    stores,
    service,
    user: { login: LOGIN, app, clientAuth, key, browser, scope, bearer, chainCodes },
    load: (spec, opts = {}) => measured(probes, () => load(spec), opts.peerPids),
    wrk: (spec, opts = {}) => measured(probes, () => wrkLoad(spec), opts.peerPids),
    probes,
    record: (name, result, extra) => rows.record(name, result, extra),
    rows,
  };
}
