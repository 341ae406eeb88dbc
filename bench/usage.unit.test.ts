import { describe, expect, it } from 'vitest';
import { deltas, parseMachineCpu, parseProcIo, parseProcStat, treeTicks, usageBetween } from './usage.ts';

// /proc/PID/stat as proc(5) prints it: a command name with a space and a parenthesis in it.
const stat = (pid: number, ppid: number, utime: number, stime: number, cutime = 0, cstime = 0, comm = 'node') =>
  `${pid} (${comm}) S ${ppid} 1 1 0 -1 4194560 100 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0 100 1000 10`;

describe('bench CPU accounting (issue 37 item 4)', () => {
  it('reads utime, stime, cutime and cstime after the last parenthesis of the command name', () => {
    expect(parseProcStat(stat(42, 7, 10, 5, 2, 1, 'postgres: app (idle) x'))).toEqual({
      pid: 42,
      ppid: 7,
      ticks: 18,
      childTicks: 3,
    });
    expect(parseProcStat('garbage')).toBeUndefined();
  });

  it('sums a process tree (children and grandchildren), not its siblings', () => {
    const stats = [
      stat(1, 0, 100, 0),
      stat(10, 1, 5, 5),
      stat(11, 10, 3, 0),
      stat(12, 1, 1, 0),
      stat(20, 1, 50, 50),
    ].map((s) => parseProcStat(s)!);
    expect(treeTicks(stats, [10])).toBe(13);
    expect(treeTicks(stats, [10, 12, 99])).toBe(14); // a root that is gone counts nothing
  });

  it('counts a reaped child through its parent’s cutime and cstime', () => {
    const before = [stat(10, 1, 5, 0), stat(11, 10, 4, 0)].map((s) => parseProcStat(s)!);
    const after = [stat(10, 1, 6, 0, 4, 0)].map((s) => parseProcStat(s)!);
    expect(treeTicks(after, [10]) - treeTicks(before, [10])).toBe(1);
  });

  it('reads the read and write system calls of /proc/PID/io', () => {
    expect(parseProcIo('rchar: 10\nwchar: 20\nsyscr: 7\nsyscw: 9\nread_bytes: 0\n')).toEqual({ reads: 7, writes: 9 });
  });

  it('reads the machine’s busy ticks from /proc/stat with idle and iowait left out', () => {
    expect(parseMachineCpu('cpu  100 0 50 800 40 5 5 0 0 0\ncpu0 1 2 3')).toEqual({ busy: 160, total: 1000 });
  });

  it('gives CPU milliseconds and counters per request over the window', () => {
    const before = { at: 0, ticks: { service: 100, mariadb: 50 }, counters: { questions: 1000, commits: 10 } };
    const after = { at: 1, ticks: { service: 300, mariadb: 150 }, counters: { questions: 3000, commits: 510, new: 4 } };
    expect(deltas(before.counters, after.counters)).toEqual({ questions: 2000, commits: 500 });
    const usage = usageBetween(before, after, 1000, 100);
    expect(usage.cpuMsPerRequest).toEqual({ service: 2, mariadb: 1 });
    expect(usage.perRequest).toEqual({ questions: 2, commits: 0.5 });
    expect(usageBetween(before, after, 0, 100).perRequest.questions).toBeNaN();
  });
});
