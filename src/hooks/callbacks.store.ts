// SQL of run-ended callbacks (migration 0013): the callbacks, one message per callback and run,
// and a row per delivery attempt.
import type { Knex } from 'knex';

/** The sealed secret opens only in its own row (sealing.ts binds it to this context). */
export const secretContext = (callbackId: string) => `workflow_callbacks.secret:${callbackId}`;

export interface CallbackRow {
  id: string;
  workflow_id: string;
  user_id: number;
  url: string;
  description: string;
  /** Sealed (src/shared/sealing.ts). */
  secret: string;
  created_at: number;
  /** Paused by the service when its attempts kept failing (deliveries.ts); its owner re-enables it. */
  status: 'active' | 'paused';
  paused_at: number | null;
  disabled_reason: string | null;
  /** The failed attempts since its last success, and when the first of them was made. */
  consecutive_failures: number;
  failing_since: number | null;
}

export interface MessageRow {
  id: string;
  callback_id: string;
  run_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: number;
}

export interface AttemptRow {
  seq: number;
  message_id: string;
  callback_id: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: number;
  run_id: string;
  event_type: string;
}

const CALLBACK_COLUMNS = [
  'id',
  'workflow_id',
  'user_id',
  'url',
  'description',
  'secret',
  'created_at',
  'status',
  'paused_at',
  'disabled_reason',
  'consecutive_failures',
  'failing_since',
] as const;
const num = (v: unknown) => Number(v);
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const callbackFromDb = (row: CallbackRow): CallbackRow => ({
  ...row,
  user_id: num(row.user_id),
  created_at: num(row.created_at),
  paused_at: numOrNull(row.paused_at),
  consecutive_failures: num(row.consecutive_failures),
  failing_since: numOrNull(row.failing_since),
});

export async function insertCallback(db: Knex, row: CallbackRow): Promise<void> {
  await db('workflow_callbacks').insert(row);
}

export async function countCallbacks(db: Knex, workflowId: string): Promise<number> {
  const row = (await db('workflow_callbacks').where({ workflow_id: workflowId }).count({ n: '*' }).first()) as {
    n: number | string;
  };
  return num(row.n);
}

export async function listCallbacksNewestFirst(
  db: Knex,
  workflowId: string,
  page: { offset: number; limit: number },
): Promise<CallbackRow[]> {
  const rows = (await db('workflow_callbacks')
    .select(CALLBACK_COLUMNS)
    .where({ workflow_id: workflowId })
    .orderBy('seq', 'desc')
    .offset(page.offset)
    .limit(page.limit)) as CallbackRow[];
  return rows.map(callbackFromDb);
}

/** Every callback of the run's workflow: what its end is told to (one indexed read; none for most runs). */
export async function callbacksOfRun(db: Knex, runId: string): Promise<CallbackRow[]> {
  const rows = (await db('workflow_callbacks as c')
    .join('runs as r', 'r.workflow_id', 'c.workflow_id')
    .select(CALLBACK_COLUMNS.map((column) => `c.${column}`))
    .where({ 'r.id': runId })) as CallbackRow[];
  return rows.map(callbackFromDb);
}

export async function findCallbackOfWorkflow(
  db: Knex,
  workflowId: string,
  id: string,
): Promise<CallbackRow | undefined> {
  const row = (await db('workflow_callbacks')
    .select(CALLBACK_COLUMNS)
    .where({ workflow_id: workflowId, id })
    .first()) as CallbackRow | undefined;
  return row && callbackFromDb(row);
}

export async function findCallback(db: Knex, id: string): Promise<CallbackRow | undefined> {
  const row = (await db('workflow_callbacks').select(CALLBACK_COLUMNS).where({ id }).first()) as
    CallbackRow | undefined;
  return row && callbackFromDb(row);
}

/** Deletes the callback, its messages and their attempts (foreign keys cascade). */
export async function deleteCallback(db: Knex, workflowId: string, id: string): Promise<boolean> {
  return (await db('workflow_callbacks').where({ workflow_id: workflowId, id }).delete()) > 0;
}

/** The message of this callback and run, once: false when it exists already (another process made it). */
export async function insertMessageOnce(db: Knex, row: MessageRow): Promise<boolean> {
  await db('callback_messages').insert(row).onConflict(['callback_id', 'run_id']).ignore();
  // The dialects answer an ignored insert differently: read back whose message stands.
  const found = (await db('callback_messages')
    .select('id')
    .where({ callback_id: row.callback_id, run_id: row.run_id })
    .first()) as { id: string } | undefined;
  return found?.id === row.id;
}

/** A message with what its delivery needs: its callback (URL, sealed secret); undefined once the callback is gone. */
export async function findMessageForDelivery(
  db: Knex,
  messageId: string,
): Promise<{ message: MessageRow; callback: CallbackRow } | undefined> {
  const message = (await db('callback_messages').where({ id: messageId }).first()) as MessageRow | undefined;
  if (!message) return undefined;
  const callback = (await db('workflow_callbacks')
    .select(CALLBACK_COLUMNS)
    .where({ id: message.callback_id })
    .first()) as CallbackRow | undefined;
  return (
    callback && {
      message: { ...message, attempts: num(message.attempts), created_at: num(message.created_at) },
      callback: callbackFromDb(callback),
    }
  );
}

/** When a callback whose attempts keep failing is paused: this many in a row, the first at least this long ago (ms). */
export interface PauseRule {
  failures: number;
  periodMs: number;
}

/**
 * Records one attempt, the message's state after it and the callback's streak of failures,
 * together; pauses the callback when a failure makes the streak meet `pause`. True when this
 * attempt paused it.
 */
export async function recordAttempt(
  db: Knex,
  attempt: Omit<AttemptRow, 'seq' | 'run_id' | 'event_type'>,
  messageStatus: MessageRow['status'],
  pause: PauseRule,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx('callback_attempts').insert(attempt);
    await trx('callback_messages')
      .where({ id: attempt.message_id })
      .update({ status: messageStatus, attempts: attempt.attempt });
    const callback = trx('workflow_callbacks').where({ id: attempt.callback_id });
    if (attempt.status === 'succeeded') {
      await callback.update({ consecutive_failures: 0, failing_since: null });
      return false;
    }
    await callback.clone().update({
      consecutive_failures: trx.raw('consecutive_failures + 1'),
      failing_since: trx.raw('COALESCE(failing_since, ?)', [attempt.attempted_at]),
    });
    if (pause.failures === 0) return false;
    const row = (await callback.clone().select('consecutive_failures', 'failing_since').first()) as
      { consecutive_failures: number | string; failing_since: number | string | null } | undefined;
    if (!row) return false;
    const since = numOrNull(row.failing_since) ?? attempt.attempted_at;
    if (num(row.consecutive_failures) < pause.failures || attempt.attempted_at - since < pause.periodMs) return false;
    const reason =
      `${num(row.consecutive_failures)} consecutive failed attempts since ${new Date(since).toISOString()}; the last: ${attempt.error ?? 'failed'}`.slice(
        0,
        500,
      );
    return (
      (await callback
        .clone()
        .where({ status: 'active' })
        .update({ status: 'paused', paused_at: attempt.attempted_at, disabled_reason: reason })) > 0
    );
  });
}

/** The callback active again with a fresh streak; false when there is no such callback of the workflow. */
export async function enableCallback(db: Knex, workflowId: string, id: string): Promise<boolean> {
  const changed = await db('workflow_callbacks')
    .where({ workflow_id: workflowId, id })
    .update({ status: 'active', paused_at: null, disabled_reason: null, consecutive_failures: 0, failing_since: null });
  return changed > 0;
}

/** Messages of the callback not yet settled (what pausing held back), oldest first. */
export async function pendingMessagesOf(db: Knex, callbackId: string, limit: number): Promise<string[]> {
  return (await db('callback_messages')
    .where({ callback_id: callbackId, status: 'pending' })
    .orderBy('seq')
    .limit(limit)
    .pluck('id')) as string[];
}

/** The callbacks of these users (their delivery jobs' groups). */
export async function callbackIdsOfUsers(db: Knex, userIds: number[]): Promise<string[]> {
  return (await db('workflow_callbacks').whereIn('user_id', userIds).pluck('id')) as string[];
}

export async function countAttempts(db: Knex, callbackId: string): Promise<number> {
  const row = (await db('callback_attempts').where({ callback_id: callbackId }).count({ n: '*' }).first()) as {
    n: number | string;
  };
  return num(row.n);
}

export async function listAttemptsNewestFirst(
  db: Knex,
  callbackId: string,
  page: { offset: number; limit: number },
): Promise<AttemptRow[]> {
  const rows = (await db('callback_attempts as a')
    .join('callback_messages as m', 'm.id', 'a.message_id')
    .select(
      'a.seq',
      'a.message_id',
      'a.callback_id',
      'a.attempt',
      'a.status',
      'a.response_status',
      'a.error',
      'a.duration_ms',
      'a.attempted_at',
      'm.run_id',
      'm.event_type',
    )
    .where({ 'a.callback_id': callbackId })
    .orderBy('a.seq', 'desc')
    .offset(page.offset)
    .limit(page.limit)) as AttemptRow[];
  return rows.map((r) => ({
    ...r,
    seq: num(r.seq),
    attempt: num(r.attempt),
    response_status: r.response_status === null ? null : num(r.response_status),
    duration_ms: num(r.duration_ms),
    attempted_at: num(r.attempted_at),
  }));
}

/**
 * Ended runs of workflows with callbacks, ended in (since, before], that have no message for a
 * callback made before they ended: run ends whose process died before it queued their delivery.
 */
export async function runEndsWithoutMessage(db: Knex, since: number, before: number, limit: number): Promise<string[]> {
  const rows = (await db('workflow_callbacks as c')
    .join('runs as r', 'r.workflow_id', 'c.workflow_id')
    .leftJoin('callback_messages as m', function () {
      this.on('m.callback_id', '=', 'c.id').andOn('m.run_id', '=', 'r.id');
    })
    .distinct('r.id')
    .whereNotNull('r.finished_at')
    .andWhere('r.finished_at', '>', since)
    .andWhere('r.finished_at', '<=', before)
    .andWhereRaw('c.created_at <= r.finished_at')
    .whereNull('m.id')
    .limit(limit)) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/** Messages made a while ago and never attempted: their job may never have been queued (the queue failed). */
export async function messagesNeverAttempted(
  db: Knex,
  before: number,
  limit: number,
): Promise<Array<{ id: string; callback_id: string; user_id: number }>> {
  const rows = (await db('callback_messages as m')
    .join('workflow_callbacks as c', 'c.id', 'm.callback_id')
    .select('m.id', 'm.callback_id', 'c.user_id')
    .where({ 'm.status': 'pending', 'm.attempts': 0, 'c.status': 'active' })
    .andWhere('m.created_at', '<=', before)
    .limit(limit)) as Array<{ id: string; callback_id: string; user_id: number }>;
  return rows.map((r) => ({ ...r, user_id: num(r.user_id) }));
}
