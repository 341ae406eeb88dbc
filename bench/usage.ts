// Where a load's time goes, the pure part: CPU of process trees from
// /proc/PID/stat, machine CPU from /proc/stat, and deltas of the stores' counters over a load's
// window, turned into per-request figures. bench/probes.ts reads the files and the counters.

/** One line of /proc/PID/stat: its parent, and its CPU in clock ticks, its reaped children's included. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime. */
  ticks: number;
  /** cutime + cstime alone: the reaped children's (for the bench itself: its load generators and peers). */
  childTicks: number;
}

/**
 * Parses /proc/PID/stat (proc(5)). The command name (field 2) is in parentheses and may itself hold
 * spaces and parentheses, so the fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number.parseInt(text, 10);
  // After ')': state (3), ppid (4) ... utime (14), stime (15), cutime (16), cstime (17).
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(fields[n - 3]);
  const childTicks = field(16) + field(17);
  const ticks = field(14) + field(15) + childTicks;
  if (!Number.isFinite(pid) || !Number.isFinite(ticks)) return undefined;
  return { pid, ppid: field(4), ticks, childTicks };
}

/**
 * The CPU ticks of the trees rooted at `roots`: each live process under them, with what its reaped
 * children used (cutime/cstime), so a worker that exited during the load still counts (its parent
 * reaped it into its own figures).
 */
export function treeTicks(stats: readonly ProcStat[], roots: readonly number[]): number {
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  let ticks = 0;
  const seen = new Set<number>();
  const stack = roots.filter((pid) => byPid.has(pid));
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += byPid.get(pid)!.ticks;
    for (const child of children.get(pid) ?? []) stack.push(child.pid);
  }
  return ticks;
}

/** /proc/PID/io's read and write system calls (proc(5)): a process's socket round trips show there. */
export function parseProcIo(text: string): { reads: number; writes: number } {
  const value = (key: string) => Number(new RegExp(`^${key}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { reads: value('syscr'), writes: value('syscw') };
}

/** The first line of /proc/stat: the whole machine's busy and total ticks (iowait counts as idle). */
export function parseMachineCpu(text: string): { busy: number; total: number } {
  const [, ...values] = text.split('\n')[0]!.trim().split(/\s+/);
  const n = values.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
  return { busy: total - n[3]! - n[4]!, total };
}

/** What a snapshot holds: CPU ticks per part, and counters (named by their source). */
export interface Snapshot {
  at: number;
  ticks: Record<string, number>;
  counters: Record<string, number>;
}

/** `after - before` for each counter both have. */
export function deltas(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.keys(after)
      .filter((k) => k in before)
      .map((k) => [k, after[k]! - before[k]!]),
  );
}

/** A load's usage: CPU milliseconds per request of each part, counters per request, CPU cores busy. */
export interface Usage {
  /** CPU ms per request: service, mariadb, postgres, machine (everything, load generator and peers included). */
  cpuMsPerRequest: Record<string, number>;
  /** Each counter's delta per request. */
  perRequest: Record<string, number>;
}

export function usageBetween(before: Snapshot, after: Snapshot, requests: number, ticksPerSecond: number): Usage {
  const per = (n: number) => (requests > 0 ? n / requests : NaN);
  const cpu = deltas(before.ticks, after.ticks);
  const counters = deltas(before.counters, after.counters);
  return {
    cpuMsPerRequest: Object.fromEntries(Object.entries(cpu).map(([k, t]) => [k, per((t / ticksPerSecond) * 1000)])),
    perRequest: Object.fromEntries(Object.entries(counters).map(([k, n]) => [k, per(n)])),
  };
}
