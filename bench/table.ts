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
 * The goal a row's target states for its ratio ('≥ 1.2x', 'p50 ≤ 2x idle'...): whether `ratio`
 * meets it, or undefined when the target states none for the ratio.
 */
export function meetsGoal(target: string | undefined, ratio: number | undefined): boolean | undefined {
  const goal = target?.match(/([≥≤]) ?(\d+(?:\.\d+)?)x/);
  if (!goal || ratio === undefined || !Number.isFinite(ratio)) return undefined;
  return goal[1] === '≥' ? ratio >= Number(goal[2]) : ratio <= Number(goal[2]);
}

/**
 * Every run, each row's req/s, its ratio and whether that met the row's goal, under the 1-minute
 * load average as the run began; the last column says whether the goal held in every run. A goal
 * holds when it holds in each run, so a run that misses is shown here, never hidden in a median.
 */
export function printEachRun(runs: Row[][], loads: number[]): void {
  const errors = (row: Row) =>
    typeof row.result !== 'string' && row.result.errors ? `, ${row.result.errors} errors` : '';
  const cell = (row: Row | undefined) => {
    if (row === undefined) return '-';
    if (row.goal) return `${row.goal.text}${errors(row)}${row.goal.met ? ', met' : ', MISSED'}`;
    if (typeof row.result === 'string') return row.result.length > 24 ? `${row.result.slice(0, 21)}...` : row.result;
    const parts = [`${fmt(row.result.rps, 0)}/s`];
    if (row.ratio !== undefined) parts.push(`${fmt(row.ratio, 2)}x`);
    const met = meetsGoal(row.target, row.ratio);
    if (met !== undefined) parts.push(met ? 'met' : 'MISSED');
    return parts.join(', ') + errors(row);
  };
  // A row's own goal (the engine rows) or the one its target states for its ratio.
  const metIn = (row: Row | undefined, target: string | undefined) => row?.goal?.met ?? meetsGoal(target, row?.ratio);
  const held = (name: string, target: string | undefined) => {
    const each = runs.map((run) =>
      metIn(
        run.find((r) => r.name === name),
        target,
      ),
    );
    if (each.every((m) => m === undefined)) return '';
    const met = each.filter((m) => m === true).length;
    return `${met} of ${runs.length} runs${met === runs.length ? '' : ': NOT held'}`;
  };
  printMarkdown(
    ['load', ...runs.map((_, i) => `run ${i + 1} (load ${fmt(loads[i] ?? NaN, 2)})`), 'target', 'goal met in'],
    runs[0]!.map((first) => [
      first.name,
      ...runs.map((run) => cell(run.find((r) => r.name === first.name))),
      first.target ?? '',
      held(first.name, first.target),
    ]),
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
