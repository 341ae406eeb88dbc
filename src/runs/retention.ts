// Run retention (docs/operating.md "Storage quotas"): finished runs older than RUN_RETENTION_DAYS, and each
// user's finished runs past the newest USER_MAX_STORED_RUNS, are deleted by a periodic purge that
// every process executing runs makes (machinery.ts, beside the purge of deleted workflows). A
// run's steps, events and callback messages go with it (FK cascade). Queued and running runs are
// never purged. Deletes go in small batches, and a pass does a bounded amount of work, so a
// large backlog drains over a few passes without holding the store for long.
import type { Knex } from 'knex';
import type { AppContext } from '../context.ts';
import { TERMINAL } from './store.ts';

/** How often a process purges runs (its sweep runs more often; this purge need not). */
export const RUN_PURGE_INTERVAL_MS = 60_000;
/** Runs deleted per statement: a run's events can be thousands of rows, each cascading. */
const BATCH = 200;
/** Batches per pass and rule: a pass stays short; what is left waits for the next. */
const BATCHES_PER_PASS = 25;

export type RetentionContext = Pick<AppContext, 'db' | 'config' | 'now'>;

const finished = (db: Knex) => db('runs').whereIn('status', TERMINAL as string[]);

/** Deletes the runs `select` finds, a batch at a time; returns how many. */
async function deleteInBatches(db: Knex, select: () => Knex.QueryBuilder): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < BATCHES_PER_PASS; i++) {
    const ids = ((await select().select('id').limit(BATCH)) as Array<{ id: string }>).map((r) => r.id);
    if (!ids.length) break;
    deleted += await db('runs').whereIn('id', ids).delete();
    if (ids.length < BATCH) break;
  }
  return deleted;
}

/** Finished runs that ended before `cutoff` (ms). */
export function purgeRunsFinishedBefore(db: Knex, cutoff: number): Promise<number> {
  return deleteInBatches(db, () => finished(db).where('finished_at', '<', cutoff).orderBy('finished_at'));
}

/** For each user with more than `keep` finished runs, all but the newest `keep` of them (by start order). */
export async function purgeRunsPastCount(db: Knex, keep: number): Promise<number> {
  const over = (await finished(db).select('user_id').groupBy('user_id').havingRaw('count(*) > ?', [keep])) as Array<{
    user_id: number | string;
  }>;
  let deleted = 0;
  for (const { user_id: userId } of over) {
    const oldestKept = (await finished(db)
      .where({ user_id: userId })
      .orderBy('seq', 'desc')
      .offset(keep - 1)
      .first('seq')) as { seq: number | string } | undefined;
    if (!oldestKept) continue;
    deleted += await deleteInBatches(db, () =>
      finished(db).where({ user_id: userId }).andWhere('seq', '<', Number(oldestKept.seq)),
    );
  }
  return deleted;
}

/** One pass of both rules (each off when its setting is 0). */
export async function purgeRuns(ctx: RetentionContext): Promise<{ byAge: number; byCount: number }> {
  const { RUN_RETENTION_DAYS: days, USER_MAX_STORED_RUNS: keep } = ctx.config;
  const byAge = days > 0 ? await purgeRunsFinishedBefore(ctx.db, ctx.now() - days * 86_400_000) : 0;
  const byCount = keep > 0 ? await purgeRunsPastCount(ctx.db, keep) : 0;
  return { byAge, byCount };
}
