// Where a load's time goes, read from the machine: CPU of the service's process
// tree, of mariadbd and of the queue's PostgreSQL (postmaster and its backends) from /proc, and the
// stores' own counters, before and after each load. The arithmetic is usage.ts's.
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Stores } from './processes.ts';
import { parseMachineCpu, parseProcIo, parseProcStat, treeTicks, type ProcStat, type Snapshot } from './usage.ts';

/**
 * What each counter is. MariaDB's from SHOW GLOBAL STATUS: statements the server was sent
 * (Questions: the probe's own two a load aside), explicit COMMITs (Com_commit; an autocommit
 * statement is not one), transactions its storage engines committed (Handler_commit, autocommit
 * ones included) and InnoDB's fsyncs (Innodb_data_fsyncs, the redo log's included: at
 * innodb_flush_log_at_trx_commit=1 a commit waits for one, shared by the commits of a group).
 * The bench's MariaDB is its own (bench/mariadb.ts): nothing else moves these counters.
 * The service's read and write system calls (/proc/PID/io: sockets mostly, so round trips to the
 * stores and to clients) are counted too.
 * PostgreSQL's from pg_stat_database, all databases: transactions committed (every statement
 * outside BEGIN is one), as the statistics collector has flushed them (within a second).
 */
export const COUNTERS = {
  'mariadb.statements': 'Questions',
  'mariadb.commits': 'Com_commit',
  'mariadb.handler_commits': 'Handler_commit',
  'mariadb.fsyncs': 'Innodb_data_fsyncs',
} as const;

/** The MariaDB settings a figure depends on, printed with the table. */
const SETTINGS = [
  'version',
  'innodb_flush_log_at_trx_commit',
  'sync_binlog',
  'log_bin',
  'innodb_buffer_pool_size',
  'innodb_flush_method',
  'innodb_doublewrite',
];

export class Probes {
  readonly ticksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  private readonly mariadb: mysql.Connection;
  private readonly postgres: pg.Client;
  private readonly roots: { service: number[]; mariadb: number[]; postgres: number[] };

  private constructor(mariadb: mysql.Connection, postgres: pg.Client, roots: Probes['roots']) {
    this.mariadb = mariadb;
    this.postgres = postgres;
    this.roots = roots;
  }

  static async open(stores: Stores, servicePid: number): Promise<Probes> {
    const mariadb = await mysql.createConnection(stores.databaseUrl);
    const postgres = new pg.Client({ connectionString: stores.queueUrl });
    await postgres.connect();
    // This connection's backend is a child of the postmaster, which is the root of the cluster's tree.
    const backend = (await postgres.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const postmaster = parseProcStat(await readFile(`/proc/${backend}/stat`, 'utf8'))?.ppid;
    return new Probes(mariadb, postgres, {
      service: [servicePid],
      mariadb: [stores.mariadbPid],
      postgres: postmaster ? [postmaster] : [],
    });
  }

  /** Adds a process tree to the service's (another API or worker process of the same service). */
  addServicePid(pid: number): void {
    this.roots.service.push(pid);
  }

  async settings(): Promise<Record<string, string>> {
    const [rows] = (await this.mariadb.query(
      `SELECT ${SETTINGS.map((s) => `@@${s} AS ${s}`).join(', ')}`,
    )) as unknown as [Record<string, unknown>[]];
    return Object.fromEntries(SETTINGS.map((s) => [s, String(rows[0]![s])]));
  }

  /**
   * CPU ticks and counters now. `pgSettleMs`: wait that long for PostgreSQL's counters (flushed
   * about every second). `peerPids`: a peer's processes, counted as `peer`.
   */
  async snapshot(pgSettleMs = 0, peerPids: number[] = []): Promise<Snapshot> {
    const at = Date.now();
    const stats = await allProcStats();
    const ticks: Record<string, number> = {
      service: treeTicks(stats, this.roots.service),
      mariadb: treeTicks(stats, this.roots.mariadb),
      postgres: treeTicks(stats, this.roots.postgres),
      peer: treeTicks(stats, peerPids),
      // The bench's reaped children: the load generator of each load (and each peer, once stopped).
      load: stats.find((s) => s.pid === process.pid)?.childTicks ?? NaN,
      machine: parseMachineCpu(await readFile('/proc/stat', 'utf8')).busy,
    };
    const [status] = (await this.mariadb.query('SHOW GLOBAL STATUS WHERE Variable_name IN (?)', [
      Object.values(COUNTERS),
    ])) as unknown as [Array<{ Variable_name: string; Value: string }>];
    const value = new Map(status.map((r) => [r.Variable_name, Number(r.Value)]));
    const counters: Record<string, number> = Object.fromEntries(
      Object.entries(COUNTERS).map(([k, name]) => [k, value.get(name) ?? NaN]),
    );
    // A process that has exited (row 10's, after it) counts nothing, in both snapshots alike.
    const io = await Promise.all(
      this.roots.service.map(async (pid) =>
        readFile(`/proc/${pid}/io`, 'utf8').then(parseProcIo, () => ({ reads: 0, writes: 0 })),
      ),
    );
    counters['service.reads'] = io.reduce((sum, x) => sum + x.reads, 0);
    counters['service.writes'] = io.reduce((sum, x) => sum + x.writes, 0);
    if (pgSettleMs) await new Promise((r) => setTimeout(r, pgSettleMs));
    await this.postgres.query('SELECT pg_stat_clear_snapshot()');
    const xacts = await this.postgres.query<{ commits: string }>(
      'SELECT sum(xact_commit) AS commits FROM pg_stat_database',
    );
    counters['postgres.commits'] = Number(xacts.rows[0]!.commits);
    return { at, ticks, counters };
  }

  async close(): Promise<void> {
    await this.mariadb.end().catch(() => {});
    await this.postgres.end().catch(() => {});
  }
}

/** /proc/PID/stat of every process (one that exits while it is read is left out). */
async function allProcStats(): Promise<ProcStat[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(
    pids.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').then(parseProcStat, () => undefined)),
  );
  return stats.filter((s): s is ProcStat => s !== undefined);
}
