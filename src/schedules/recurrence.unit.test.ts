import { PgBoss } from 'pg-boss';
import { describe, expect, it } from 'vitest';
import { Problem } from '../shared/errors.ts';
import { checkRecurrence, isLateTick, type Calendar } from './recurrence.ts';

// pg-boss's own cron calendar (previewSchedule computes occurrences without a database, so the
// instance is never started), read as the schedule queue reads it.
const boss = new PgBoss('postgres://unused@127.0.0.1:1/unused');
const calendar: Calendar = {
  next(cron, timezone, from) {
    const [next] = boss.previewSchedule(cron, { tz: timezone, count: 1, ...(from && { from }) });
    if (!next) throw new Error(`${cron} never comes`);
    return next;
  },
  shortestGap(cron, timezone) {
    const times = boss.previewSchedule(cron, { tz: timezone, count: 16 }).map((d) => d.getTime());
    return Math.min(...times.slice(1).map((t, i) => t - times[i]!));
  },
};

function problemOf(fn: () => void): Problem {
  try {
    fn();
  } catch (err) {
    if (err instanceof Problem) return err;
    throw err;
  }
  throw new Error('expected a problem');
}

describe('a schedule recurrence', () => {
  it('accepts a readable expression in an IANA zone, ticking no closer than the minimum', () => {
    expect(() => checkRecurrence(calendar, '*/5 * * * *', 'Europe/Paris', 300)).not.toThrow();
    expect(() => checkRecurrence(calendar, '0 9 * * 1-5', 'America/New_York', 60)).not.toThrow();
    expect(() => checkRecurrence(calendar, '* * * * *', 'UTC', 60)).not.toThrow();
  });

  it('refuses a time zone that is not an IANA name, pointing at /body/timezone', () => {
    for (const zone of ['Mars/Olympus_Mons', 'Paris', '']) {
      const problem = problemOf(() => checkRecurrence(calendar, '0 * * * *', zone, 60));
      expect(problem.code).toBe('invalid_schedule');
      expect(problem.errors).toEqual([
        { pointer: '/body/timezone', message: `${JSON.stringify(zone)} is not an IANA time zone` },
      ]);
    }
  });

  it.each(['61 * * * *', '0 25 * * *', 'every minute', '0 0 31 2 *'])(
    'refuses %j, which the scheduler cannot read or that never comes, pointing at /body/cron',
    (cron) => {
      const problem = problemOf(() => checkRecurrence(calendar, cron, 'UTC', 60));
      expect(problem.code).toBe('invalid_schedule');
      expect(problem.errors?.map((e) => e.pointer)).toEqual(['/body/cron']);
    },
  );

  it('refuses ticks closer than the minimum interval, saying how far apart they are', () => {
    const problem = problemOf(() => checkRecurrence(calendar, '*/5 * * * *', 'UTC', 301));
    expect(problem.errors).toEqual([
      {
        pointer: '/body/cron',
        message: 'ticks 300 s apart; the shortest interval allowed is 301 s (SCHEDULE_MIN_INTERVAL_SECONDS)',
      },
    ]);
  });

  it('judges the shortest gap, not the usual one: two ticks a minute apart in each hour', () => {
    expect(problemOf(() => checkRecurrence(calendar, '0,1 * * * *', 'UTC', 120)).code).toBe('invalid_schedule');
  });

  it('checks the zone before the expression: a bad zone is the one problem reported', () => {
    expect(problemOf(() => checkRecurrence(calendar, 'nonsense', 'Nowhere/City', 60)).errors?.[0]?.pointer).toBe(
      '/body/timezone',
    );
  });
});

describe('a late tick (no backlog)', () => {
  const schedule = { cron: '*/5 * * * *', timezone: 'UTC' };
  const filed = new Date('2026-11-01T10:00:00.000Z');
  const takenAt = (iso: string) => ({ createdOn: filed, startedOn: new Date(iso) });

  it('is on time while the next tick has not come due', () => {
    expect(isLateTick(calendar, schedule, takenAt('2026-11-01T10:00:00.000Z'))).toBe(false);
    expect(isLateTick(calendar, schedule, takenAt('2026-11-01T10:04:59.999Z'))).toBe(false);
  });

  it('is late from the moment the next tick is due', () => {
    expect(isLateTick(calendar, schedule, takenAt('2026-11-01T10:05:00.000Z'))).toBe(true);
    expect(isLateTick(calendar, schedule, takenAt('2026-11-02T00:00:00.000Z'))).toBe(true);
  });

  it('reads the next tick in the schedule zone: a daily 09:00 in Paris filed at 08:00 UTC (CET)', () => {
    const daily = { cron: '0 9 * * *', timezone: 'Europe/Paris' };
    const tick = { createdOn: new Date('2026-11-01T08:00:00Z') };
    expect(isLateTick(calendar, daily, { ...tick, startedOn: new Date('2026-11-02T07:59:59Z') })).toBe(false);
    expect(isLateTick(calendar, daily, { ...tick, startedOn: new Date('2026-11-02T08:00:00Z') })).toBe(true);
  });

  it('is never late when the expression no longer reads (the schedule says its own problem)', () => {
    const broken = { cron: 'not cron', timezone: 'UTC' };
    expect(isLateTick(calendar, broken, takenAt('2027-01-01T00:00:00Z'))).toBe(false);
  });
});
