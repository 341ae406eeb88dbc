// A run's events (GET .../runs/{run_id}/events, openapi.yaml streamRunEvents), stored in
// run_events with a per-run sequence so that any API process serves any run's stream and a client
// resuming with Last-Event-ID loses nothing. Writers: the worker executing the run (eventLog in
// runner.ts) and whoever ends it (worker, cancel, sweep), the last in the same transaction as the
// run's end, so a run seen ended always has its run.finished.
import type { Knex } from 'knex';
import { isWriteConflict } from '../db/insert.ts';

export type RunEventType =
  | 'run.status'
  | 'node.started'
  | 'node.delta'
  | 'node.retry'
  | 'node.progress'
  | 'node.finished'
  | 'run.finished'
  | 'run.reused'
  | 'node.waiting';

export interface NewRunEvent {
  type: RunEventType;
  data: unknown;
}

export interface StoredRunEvent {
  seq: number;
  type: RunEventType;
  /** The event's data as JSON text (one line: JSON.stringify never writes a raw newline). */
  data: string;
}

/** Tries of an append whose numbers another writer of the run took first (a cancel beside the worker). */
const APPEND_TRIES = 10;

/**
 * Appends events to the run's stream, numbered after the last one; returns the last number. The
 * last number is read with a locking read (MySQL's repeatable read would otherwise re-read a stale
 * snapshot inside a transaction), and a number taken meanwhile by another writer is a unique-key
 * violation: read again and retry. Each try is its own (nested) transaction, so a violation does
 * not poison a caller's transaction on PostgreSQL.
 */
export async function appendRunEvents(
  db: Knex | Knex.Transaction,
  runId: string,
  events: NewRunEvent[],
  now: number,
): Promise<number> {
  for (let tries = 1; ; tries++) {
    try {
      return await db.transaction(async (trx) => {
        const last = (await trx('run_events')
          .select('seq')
          .where({ run_id: runId })
          .orderBy('seq', 'desc')
          .limit(1)
          .forUpdate()
          .first()) as { seq: number } | undefined;
        return insertRunEvents(trx, runId, Number(last?.seq ?? 0), events, now);
      });
    } catch (err) {
      // A deadlock: InnoDB's gap locks of concurrent runs' first events can cross; the loser retries.
      if (!isWriteConflict(err) || tries >= APPEND_TRIES) throw err;
    }
  }
}

/** The number of the run's last event (0 for none), by a plain read: no lock, so no gap lock. */
export async function lastRunEventSeq(db: Knex | Knex.Transaction, runId: string): Promise<number> {
  const last = (await db('run_events').where({ run_id: runId }).max({ seq: 'seq' }).first()) as
    { seq: number | string | null } | undefined;
  return Number(last?.seq ?? 0);
}

/**
 * Inserts events numbered from `after + 1` in one statement, with no read and no lock before it:
 * the writer that numbers a run's events itself (the worker executing it, runner.ts). A number
 * another writer took meanwhile (a cancel's end events, or `after` was a guess) makes the insert a
 * unique-key violation, and the caller reads the last number again (lastRunEventSeq).
 */
export async function insertRunEvents(
  db: Knex | Knex.Transaction,
  runId: string,
  after: number,
  events: NewRunEvent[],
  now: number,
): Promise<number> {
  if (events.length) {
    await db('run_events').insert(
      events.map((e, i) => ({
        run_id: runId,
        seq: after + i + 1,
        type: e.type,
        data: JSON.stringify(e.data),
        created_at: now,
      })),
    );
  }
  return after + events.length;
}

/**
 * appendRunEvents without its locking read, for a writer that knows (or guesses) the last number:
 * one insert when `after` is right; a collision reads the last number and tries again. Not inside
 * a transaction (a violation would abort it on PostgreSQL).
 */
export async function appendRunEventsAfter(
  db: Knex,
  runId: string,
  after: number | undefined,
  events: NewRunEvent[],
  now: number,
): Promise<number> {
  let base = after ?? (await lastRunEventSeq(db, runId));
  for (let tries = 1; ; tries++) {
    try {
      return await insertRunEvents(db, runId, base, events, now);
    } catch (err) {
      if (!isWriteConflict(err) || tries >= APPEND_TRIES) throw err;
      base = await lastRunEventSeq(db, runId);
    }
  }
}

/** The run's events numbered after `after`, oldest first, at most `limit`. */
export async function listRunEventsAfter(
  db: Knex,
  runId: string,
  after: number,
  limit: number,
): Promise<StoredRunEvent[]> {
  const rows = (await db('run_events')
    .select('seq', 'type', 'data')
    .where({ run_id: runId })
    .andWhere('seq', '>', after)
    .orderBy('seq', 'asc')
    .limit(limit)) as StoredRunEvent[];
  return rows.map((r) => ({ seq: Number(r.seq), type: r.type, data: r.data }));
}

/**
 * The run's events of the types named, oldest first, at most `limit`, their data parsed: what the
 * console's timeline reads (a node's starts, retries and waits). A walk of the run's (run_id, seq)
 * key, bounded by RUN_MAX_EVENTS; the many node.delta rows are read past, not returned.
 */
export async function listRunEventsOfTypes(
  db: Knex,
  runId: string,
  types: readonly RunEventType[],
  limit: number,
): Promise<Array<{ type: RunEventType; data: Record<string, unknown> }>> {
  const rows = (await db('run_events')
    .select('type', 'data')
    .where({ run_id: runId })
    .whereIn('type', types)
    .orderBy('seq', 'asc')
    .limit(limit)) as Array<{ type: RunEventType; data: string }>;
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) as Record<string, unknown> }));
}

/** One event as a Server-Sent Events frame (WHATWG HTML 9.2): id, event name, one data line. */
export function sseFrame(event: StoredRunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${event.data}\n\n`;
}
