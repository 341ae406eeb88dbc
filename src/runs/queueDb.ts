import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
// pg-boss's own connection pool (the class it makes when given no `db`), extended below. A private
// module, and its private `pool` field is used below: package.json pins pg-boss's exact version, and
// open() fails if the field is gone.
import PgBossDb from 'pg-boss/dist/db.js';

/** Distinct statements prepared per pool (PreparedQueueDb); beyond them (pg-boss builds few), the rest run unnamed. */
const PREPARED_MAX = 200;

/**
 * SQLSTATE of "cached plan must not change result type": a prepared statement returning `*` whose
 * table gained or lost columns under it, as another process's pg-boss migration does to the job
 * table in a rolling upgrade. PostgreSQL refuses the statement before running it.
 */
const PLAN_RESULT_CHANGED = '0A000';

/**
 * pg-boss's connection pool with its statements prepared: each distinct SQL text run with
 * parameters gets a name (its hash), so each connection parses and plans it once and then only
 * executes it (the `pg` driver prepares a named statement on its first use on each connection).
 * pg-boss sends them unnamed, which PostgreSQL parses and plans on every call: for the send and
 * the complete of each run, that was more than half of their time in PostgreSQL (docs/benchmarks.md,
 * issue 19, "Sixth pass"). Statements without parameters (pg-boss's scripts, and its fetch, whose
 * cached plan measured no faster) and those run with an abort signal go unnamed, as pg-boss sends them.
 */
export class PreparedQueueDb extends PgBossDb {
  /** Each text's name: its hash, and a generation bumped when its prepared plan went stale. */
  private readonly names = new Map<string, string>();
  private readonly generations = new Map<string, number>();

  /**
   * pg-boss names the connections of a pool it makes `pgboss:<8 hex>` (index.js), so that
   * pg_stat_activity joins to its instance row (which records the registering session's name), but
   * not those of a pool it is handed: this one takes a name of that form itself, unless given one.
   */
  constructor(config: ConstructorParameters<typeof PgBossDb>[0]) {
    super({ ...config, application_name: config.application_name || `pgboss:${randomUUID().slice(0, 8)}` });
  }

  override async open(): Promise<void> {
    await super.open();
    if (typeof this.pgPool()?.query !== 'function') {
      await super.close().catch(() => {});
      throw new Error(
        "PreparedQueueDb: pg-boss's Db (pg-boss/dist/db.js) no longer keeps its pg.Pool in `pool` after open(); " +
          'this pg-boss version is not the one queueDb.ts was written for (see the version pinned in package.json)',
      );
    }
  }

  override async executeSql(text: string, values?: unknown[], options: { signal?: AbortSignal; retire?: AbortSignal } = {}): Promise<pg.QueryResult> {
    const name = values?.length && !options.signal && !options.retire && this.opened ? this.nameOf(text) : undefined;
    if (!name) return super.executeSql(text, values, options);
    try {
      return await this.pgPool()!.query({ name, text, values });
    } catch (err) {
      if ((err as { code?: unknown }).code !== PLAN_RESULT_CHANGED) throw err;
      // The statement did not run. Every connection holds the stale plan under this name (the
      // pool drops only the one that failed): under a new name, the connection that takes the call
      // prepares it again, and so does each other one on its next call.
      return await this.pgPool()!.query({ name: this.renamed(text, name), text, values });
    }
  }

  /** pg-boss's pg.Pool, a field its Db class keeps private (checked at open()). */
  private pgPool(): pg.Pool | undefined {
    return (this as unknown as { pool: pg.Pool }).pool;
  }

  /** A text's name; undefined past PREPARED_MAX texts (pg-boss builds a few dozen). */
  private nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < PREPARED_MAX) {
      name = `pgboss_${createHash('sha1').update(text).digest('hex')}`;
      this.names.set(text, name);
    }
    return name;
  }

  /** A new name for a text whose plan under `stale` went stale (once, for concurrent failures). */
  private renamed(text: string, stale: string): string {
    if (this.names.get(text) === stale) {
      const generation = (this.generations.get(text) ?? 0) + 1;
      this.generations.set(text, generation);
      this.names.set(text, `pgboss_${createHash('sha1').update(text).digest('hex')}_${generation}`);
    }
    return this.names.get(text)!;
  }
}
