// The runs store (runsStore.ts) on MySQL: as on PostgreSQL (runsStorePostgres.ts), except the two
// transactions every run makes, its start within the quota and its end with the last of its log,
// which go as one multi-statement round trip (src/db/oneRoundTrip.ts): under the runs load the
// statements' count, not their SQL, was most of the service's CPU (docs/benchmarks-history.md).
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { isWriteConflict } from '../db/insert.ts';
import { inOneRoundTrip, insertEachWhere, type Statement } from '../db/oneRoundTrip.ts';
import {
  RUN_COLUMNS,
  STEP_COLUMNS,
  unfinishedRunsOfUser,
  userAndWorkflowLock,
  type RunFinishParams,
} from './runStatements.ts';
import { finishParams, finishStatementOf, ownerOf, PostgresRunsStore } from './runsStorePostgres.ts';
import { num } from './store.ts';
import type { EndingAttempt, FinalEvents, NewRunRow, NewStepRow, QuotaInsert, RunEnd } from './store.ts';

/** The runs store's adapter for MySQL (implements RunsStore, runsStore.ts). */
export class MysqlRunsStore extends PostgresRunsStore {
  /**
   * The quota's transaction in one round trip: the same lock, then the count into a variable
   * (`SELECT ... INTO`, a consistent read like the plain count: checked on MariaDB that it takes no
   * lock on the runs it counts, unlike `SET @v = (SELECT ...)`), then one insert whose rows each
   * carry their own condition (the i-th fits while the count is below `limit - i`, and only while
   * the workflow, locked, is not deleted). The lock's answer says whether the workflow stood; the
   * insert's affected rows how many fit.
   */
  override async startWithinQuota(rows: readonly NewRunRow[], limit: number): Promise<QuotaInsert[]> {
    if (!rows.length) return [];
    const { userId, workflowId } = ownerOf(rows);
    const count = unfinishedRunsOfUser.statement(this.db, { userId });
    const [locked, , inserted] = await inOneRoundTrip(this.db, [
      userAndWorkflowLock.statement(this.db, { userId, workflowId }),
      { ...count, sql: `${count.sql} INTO @active_runs` },
      insertEachWhere(
        'runs',
        RUN_COLUMNS,
        rows.map((r, i) => ({
          values: RUN_COLUMNS.map((c) => r[c] ?? null),
          conditionValues: [limit - i, workflowId],
        })),
        '@active_runs < ? AND EXISTS (SELECT 1 FROM `workflows` WHERE `id` = ? AND `deleted_at` IS NULL)',
      ),
    ]);
    const workflow = (locked as Array<{ deleted_at: unknown }>)[0];
    if (!workflow || num(workflow.deleted_at) !== null) return rows.map(() => 'workflow_deleted' as const);
    const fit = (inserted as { affectedRows: number }).affectedRows;
    return rows.map((_, i) => (i < fit ? 'inserted' : 'over_limit'));
  }

  /**
   * The end's transaction in one round trip when the events' numbers are known: the fenced update,
   * then the inserts, which run only if the update ended the run. A number taken meanwhile (a stale
   * attempt's write) or an unknown one: PostgreSQL's transaction, which reads the last number.
   */
  override async finish(
    id: string,
    ending: EndingAttempt,
    end: RunEnd,
    final?: FinalEvents,
    steps: readonly NewStepRow[] = [],
  ): Promise<boolean> {
    if (!final && !steps.length) return super.finish(id, ending, end);
    const update = finishParams(id, ending, end);
    let after = final?.after;
    if (after !== undefined || !final) {
      try {
        return await this.finishInOneRoundTrip(
          update,
          steps,
          final ? { events: final.events, after: after! } : undefined,
        );
      } catch (err) {
        // A number taken meanwhile (or any other failure): the transaction reports or survives it.
        if (isDatabaseUnavailable(err)) throw err;
        if (isWriteConflict(err)) after = undefined;
      }
    }
    return this.finishInTransaction(update, final && { ...final, after }, steps);
  }

  private async finishInOneRoundTrip(
    update: RunFinishParams,
    steps: readonly NewStepRow[],
    final: { events: FinalEvents['events']; after: number } | undefined,
  ): Promise<boolean> {
    const ended = '@run_ended = 1';
    const statements: Statement[] = [
      finishStatementOf(update).statement(this.db, update),
      { sql: 'SET @run_ended = ROW_COUNT()', values: [] },
    ];
    if (steps.length)
      statements.push(
        insertEachWhere(
          'run_steps',
          STEP_COLUMNS,
          steps.map((s) => ({ values: STEP_COLUMNS.map((c) => s[c] ?? null) })),
          ended,
        ),
      );
    if (final?.events.length) {
      const rows = final.events.map((e, i) => ({
        values: [update.id, final.after + i + 1, e.type, JSON.stringify(e.data), update.finished_at],
      }));
      statements.push(insertEachWhere('run_events', ['run_id', 'seq', 'type', 'data', 'created_at'], rows, ended));
    }
    const [endUpdate] = await inOneRoundTrip(this.db, statements);
    return (endUpdate as { affectedRows: number }).affectedRows === 1;
  }
}
