// The rows a bench run records and the table `npm run bench` prints (the median of --repeat runs).
import type { LoadResult } from './types.ts';

export type Row = {
  name: string;
  result: LoadResult | string;
  ratio?: number;
  target?: string;
  /** A goal checked in each run (the engine rows): this run's figure, and whether it met the goal. */
  goal?: { text: string; met: boolean };
};
export type RowExtra = Omit<Row, 'name' | 'result'>;

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

export function median<T>(values: T[], key: (v: T) => number): T {
  return [...values].sort((a, b) => key(a) - key(b))[Math.floor((values.length - 1) / 2)]!;
}

/** Per row, the run with the median req/s (its p50 and p99 with it), and the median ratio. */
export function medianRows(runs: Row[][]): Row[] {
  return runs[0]!.map((first) => {
    const measured = runs
      .map((run) => run.find((r) => r.name === first.name))
      .filter((r): r is Row => r !== undefined && typeof r.result !== 'string');
    if (measured.length === 0) return first;
    const ratios = measured.map((r) => r.ratio).filter((x): x is number => x !== undefined);
    const middle = median(measured, (r) => (r.result as LoadResult).rps);
    const row: Row = { ...first, result: middle.result, ...(middle.goal && { goal: middle.goal }) };
    if (ratios.length) row.ratio = median(ratios, (x) => x);
    return row;
  });
}

export function printTable(table: Row[]): void {
  const header = ['load', 'req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'ours ÷ peer (÷ Express)', 'target'];
  const ratio = (r: Row) => (r.ratio === undefined ? '' : `${fmt(r.ratio, 2)}x`);
  printMarkdown(
    header,
    table.map((r) =>
      typeof r.result === 'string'
        ? [r.name, r.result, '', '', '', '', r.target ?? '']
        : [
            r.name,
            fmt(r.result.rps, 0),
            fmt(r.result.p50),
            fmt(r.result.p99),
            String(r.result.errors),
            ratio(r),
            r.target ?? '',
          ],
    ),
  );
  const notes = table.filter((r) => typeof r.result !== 'string' && r.result.note);
  for (const r of notes) console.log(`  ${r.name}: ${(r.result as LoadResult).note}`);
}

/**
 * Each run's ratio of every row that has one, with the load average when the run began: a goal
 * holds when it holds in every run, so a run that misses is shown here, not hidden in the median.
 */
export function printEachRun(runs: Row[][], loads: number[]): void {
  if (runs.length < 2) return;
  const named = runs[0]!.filter((r) => r.ratio !== undefined || r.goal !== undefined).map((r) => r.name);
  if (named.length === 0) return;
  const errors = (row: Row) =>
    typeof row.result !== 'string' && row.result.errors ? `, ${row.result.errors} errors` : '';
  const cell = (row: Row | undefined) => {
    if (row?.goal) return `${row.goal.text}${errors(row)}${row.goal.met ? '' : ' (missed)'}`;
    return row === undefined || row.ratio === undefined ? '-' : `${fmt(row.ratio, 2)}x${errors(row)}`;
  };
  printMarkdown(
    ['load', ...runs.map((_, i) => `run ${i + 1} (load ${fmt(loads[i] ?? NaN, 2)})`)],
    named.map((name) => [name, ...runs.map((run) => cell(run.find((r) => r.name === name)))]),
  );
}

/**
 * Where each row's time went (bench/probes.ts says what each counter is): CPU microseconds per
 * request of the service (its process tree), MariaDB, PostgreSQL, the load generator, the peer (on a
 * peer's row) and the rest of the machine (whatever else runs: other users' work); the
 * service's write system calls, the stores' statements and commits per request.
 */
export function printUsage(table: Row[]): void {
  const header = [
    'load',
    'CPU µs/req: service',
    'MariaDB',
    'PostgreSQL',
    'load gen.',
    'peer',
    'rest',
    'service writes/req',
    'MariaDB stmts/req',
    'COMMITs/req',
    'txn commits/req',
    'fsyncs/req',
    'PG xacts/req',
  ];
  const lines = table.flatMap((r) => {
    const u = typeof r.result === 'string' ? undefined : r.result.usage;
    if (!u) return [];
    const cpu = u.cpuMsPerRequest;
    const rest = cpu.machine! - cpu.service! - cpu.mariadb! - cpu.postgres! - cpu.load! - cpu.peer!;
    const n = u.perRequest;
    const us = (ms: number) => fmt(ms * 1000);
    return [
      [
        r.name,
        us(cpu.service!),
        us(cpu.mariadb!),
        us(cpu.postgres!),
        us(cpu.load!),
        us(cpu.peer!),
        us(rest),
        fmt(n['service.writes']!, 2),
        fmt(n['mariadb.statements']!, 2),
        fmt(n['mariadb.commits']!, 2),
        fmt(n['mariadb.handler_commits']!, 2),
        fmt(n['mariadb.fsyncs']!, 3),
        fmt(n['postgres.commits']!, 2),
      ],
    ];
  });
  printMarkdown(header, lines);
}

function printMarkdown(header: string[], lines: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const l of lines) console.log(line(l));
}

/** The rows of one run, each also shown on stderr as it is measured. */
export class RunRows {
  readonly rows: Row[] = [];

  record(name: string, result: LoadResult | string, extra: RowExtra = {}): void {
    this.rows.push({ name, result, ...extra });
    const shown =
      typeof result === 'string'
        ? result
        : `${fmt(result.rps, 0)} req/s, p50 ${fmt(result.p50)} ms, p99 ${fmt(result.p99)} ms, ${result.errors} errors`;
    console.error(`  ${name}: ${shown}`);
  }

  find(prefix: string): Row | undefined {
    return this.rows.find((r) => r.name.startsWith(prefix));
  }
}
