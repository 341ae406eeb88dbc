// `npm run bench`: the service as an operator runs it (MariaDB store, PostgreSQL queue,
// NODE_ENV=production, LOG_LEVEL=warn) in its own process, data prepared through the admin CLI and
// the real OAuth flow, each load from another process (bench/load.ts) on loopback, and one table.
// Rows 1 and 3 also run against each OAuth peer (bench/peers/); a peer's row divides ours by it.
//
//   npm run bench -- [--duration 10] [--connections 32] [--only 1,3,4,8,ref] [--poll-ms 5] [--repeat 3] [--profile DIR]
//
// --repeat N (3 unless told) runs the whole bench N times, each from scratch (fresh databases, service and peers),
// and prints the median of each row (and the median of each run's ours ÷ peer): on a shared VM
// single runs minutes apart differ by up to 2x. Then every run: each row's req/s, ratio and whether
// it met its goal, under the load average as the run began (a goal holds when it holds in each run).
//
// --profile starts the service with --cpu-prof and leaves its .cpuprofile in DIR when it stops
// (pair it with --only to profile one load). Never part of `npm test` or CI.
//
// To add rows: a RowGroup in bench/rows/ (bench/bench.ts says what it gets), one line in `groups`.
// To add a peer of rows 1 and 3: an OAuthPeer in bench/peers/, one line in `oauthPeers`.
import { cpus, loadavg } from 'node:os';
import { provision, type RowGroup } from './bench.ts';
import { options } from './options.ts';
import { hydra } from './peers/hydra.ts';
import { oidcProvider } from './peers/oidcProvider.ts';
import type { OAuthPeer } from './peers/types.ts';
import { Probes } from './probes.ts';
import { cleanUp, onCleanup, startService, startStores } from './processes.ts';
import { apiRows } from './rows/api.ts';
import { isolationRows } from './rows/isolation.ts';
import { neighbourRows } from './rows/neighbours.ts';
import { oauthRows } from './rows/oauth.ts';
import { referenceRows } from './rows/reference.ts';
import { runsRows } from './rows/runs.ts';
import { engineRows } from './rows/engine.ts';
import { engineCostRows } from './rows/engineCost.ts';
import { providerEnv, startFakeProvider } from './fakeProvider.ts';
import { scaleRows } from './rows/scale.ts';
import { tracingRows } from './rows/tracing.ts';
import { medianRows, printEachRun, printTable, printUsage, RunRows, type Row } from './table.ts';

const oauthPeers: OAuthPeer[] = [oidcProvider, hydra];

/** In table order; `ref` after 4 and 5 (it divides them by bare Express); 8 late (it leaves a core busy); tr last. */
const groups: RowGroup[] = [
  oauthRows(oauthPeers, [oidcProvider]),
  apiRows,
  runsRows,
  engineRows,
  engineCostRows,
  scaleRows,
  referenceRows,
  isolationRows,
  neighbourRows,
  tracingRows, // last: it replaces the service with a traced one
];

/** The MariaDB settings of the last run, printed with the table. */
let settings: Record<string, string> = {};

async function runOnce(): Promise<Row[]> {
  const { connections, durationSeconds } = options;
  console.error(`bench: ${connections} connections, ${durationSeconds} s per load, ${cpus().length} CPUs`);
  console.error('starting MariaDB, the queue PostgreSQL and the service…');
  const stores = await startStores();
  // The engine rows' model provider (bench/fakeProvider.ts), routed to by the service's settings.
  const provider = await startFakeProvider();
  const service = await startService(stores, { profileDir: options.profileDir, env: providerEnv(provider) });
  console.error('provisioning through the admin CLI and the OAuth flow…');
  const probes = await Probes.open(stores, service.pid);
  onCleanup(() => probes.close());
  settings = await probes.settings();
  const rows = new RunRows();
  const bench = await provision(options, stores, service, probes, rows);
  for (const group of groups) if (group.ids.some(options.wanted)) await group.run(bench);
  return rows.rows;
}

const started = new Date();
/** The machine's 1-minute load average when the bench began (under 1.0 on 2 cores: quiet). */
const loadBefore = loadavg()[0]!;
const runs: Row[][] = [];
/** The 1-minute load average as each run began. */
const loads: number[] = [];
try {
  for (let run = 1; run <= options.repeat; run += 1) {
    if (options.repeat > 1) console.error(`run ${run} of ${options.repeat}`);
    loads.push(loadavg()[0]!);
    runs.push(await runOnce());
    await cleanUp();
  }
} finally {
  await cleanUp();
}
const repeated = options.repeat > 1 ? `, median of ${options.repeat} runs` : '';
console.log(
  `\nnpm run bench, ${started.toISOString()}: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${options.connections} connections, ${options.durationSeconds} s per load${repeated}, MariaDB store + PostgreSQL queue, service and load generator on the same machine; 1-minute load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after\n`,
);
console.log(
  `MariaDB ${Object.entries(settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}\n`,
);
const table = medianRows(runs);
printTable(table);
console.log(
  `\nEach run (req/s, ratio, goal; the table above shows the median${runs.length > 1 ? ' of these' : ''}):\n`,
);
printEachRun(runs, loads);
console.log('\nWhere the time went (the same runs as the rows above; bench/probes.ts says what each column counts):\n');
printUsage(table);
