// Rules of the runs API: inputs must match the workflow's text_input variables exactly, a run is
// stored then enqueued (and failed clearly if the queue cannot take it), Idempotency-Key replays,
// cancel, history. Execution itself is in runner.ts.
import { isUniqueViolation } from '../db/insert.ts';
import {
  idempotencyConflict,
  invalidRunInputs,
  queueUnavailable,
  runsNotConfigured,
  runAlreadyFinished,
  runNotFound,
  tooManyConcurrentRuns,
  tooManyRunsPerMinute,
  workflowNotFound,
  RunFailure,
} from '../shared/errors.ts';
import { ulid } from '../shared/ids.ts';
import { currentTraceparent, type TraceLink } from '../shared/tracing.ts';
import { findWorkflowForRuns, isWorkflowDeletedForRuns, type WorkflowContext } from '../workflows/service.ts';
import { versionGraph } from '../workflows/versions.ts';
import type { AppContext } from '../context.ts';
import type { SharedRateLimiter } from '../http/sharedRateLimiter.ts';
import { insertRunWithinLimit } from './quotaBatches.ts';
import { checkBudgets } from './monthlyBudgets.ts';
import { closeWaitingSteps } from './approvalsStore.ts';
import { runsStore } from './runsStore.ts';
import * as store from './store.ts';
import { listRunEventsOfTypes } from './events.ts';
import type { RunRow } from './store.ts';
import { seedSteps, type RetrySeed } from './retrySeed.ts';
import { canonicalJson } from './values.ts';
import { checkInputs, type RunInputs } from './runInputs.ts';
import {
  runEndEvents,
  snapshotVersion,
  toRun,
  toRunStep,
  type GraphSnapshot,
  type PageMeta,
  type Run,
  type RunDetail,
} from './runShapes.ts';

export {
  NO_USAGE,
  runEndEvents,
  toRun,
  toRunStep,
  type GraphSnapshot,
  type PageMeta,
  type Run,
  type RunDetail,
  type RunStep,
} from './runShapes.ts';
export { isTerminal, type RunRow } from './store.ts';
export { checkInputs, inputsFromText, type RunInputs } from './runInputs.ts';

/**
 * What starting and cancelling runs needs beyond the workflow services: the run machinery (the
 * queue, and this process's worker when it has one) and the logger.
 */
export type RunContext = WorkflowContext & Pick<AppContext, 'logger' | 'runs'>;
/** Named through the context (src/runs/machinery.ts declares it there), so no import circles back. */
type RunMachinery = NonNullable<AppContext['runs']>;

/** Counts run starts per key against USER_RUNS_PER_MINUTE: null when allowed, else the seconds to wait. */
export type RunStarts = Pick<SharedRateLimiter, 'hit'>;

export const QUEUE_UNAVAILABLE = JSON.stringify(
  new RunFailure(
    'queue_unavailable',
    'The run could not be queued; retry the request (with the same Idempotency-Key to reuse this run).',
  ),
);

/** A public run id: `run_` + ULID. */
export const newRunId = () => `run_${ulid()}`;

/** A run as stored, of any workflow and status (a run-ended callback tells of its run: src/hooks/). */
export function findStoredRun(ctx: Pick<AppContext, 'db'>, runId: string): Promise<RunRow | undefined> {
  return store.findRun(ctx.db, runId);
}

/** Same inputs regardless of key order. */
const canonical = (inputs: RunInputs) => canonicalJson(inputs);

async function enqueueOrFail(ctx: RunContext, machinery: RunMachinery, row: RunRow, link?: TraceLink): Promise<RunRow> {
  try {
    await machinery.enqueue(row, link);
    return row;
  } catch (err) {
    ctx.logger.error({ err, runId: row.id }, 'run queue write failed; failing the run');
    // Never leave it queued with no job behind it.
    await runsStore(ctx.db).failUnfinished(row.id, QUEUE_UNAVAILABLE, ctx.now());
    throw queueUnavailable();
  }
}

/**
 * The run a repeated Idempotency-Key names: same inputs (and the same version, when one is asked
 * for, and the same run retried, or none) -> that run (re-queued if the queue failed it); else 409.
 */
async function replay(
  ctx: RunContext,
  machinery: RunMachinery,
  existing: RunRow,
  inputs: RunInputs,
  version?: number,
  retryOf?: string,
): Promise<RunRow> {
  const otherVersion = version !== undefined && snapshotVersion(existing.graph) !== version;
  const otherRetry = (existing.retry_of ?? undefined) !== retryOf;
  if (otherVersion || otherRetry || canonical(JSON.parse(existing.inputs) as RunInputs) !== canonical(inputs)) {
    throw idempotencyConflict(existing.id);
  }
  if (
    existing.status === 'failed' &&
    existing.error === QUEUE_UNAVAILABLE &&
    (await runsStore(ctx.db).requeue(existing.id, QUEUE_UNAVAILABLE))
  ) {
    return enqueueOrFail(ctx, machinery, {
      ...existing,
      status: 'queued',
      error: null,
      finished_at: null,
      duration_ms: null,
    });
  }
  return existing;
}

/**
 * Stores a queued run with a snapshot of the workflow and enqueues it. The run and its job may
 * live in different databases (MySQL store, PostgreSQL queue), so this is two writes, made safe:
 * - the enqueue fails: the run is failed at once (`queue_unavailable`) and the caller gets a 503;
 *   repeating the request with the same Idempotency-Key re-queues that run;
 * - this process dies between the two writes: the workers' sweep (runner.ts sweepStuckRuns)
 *   enqueues any run queued for 30 s; the queue keeps at most one job per run.
 * With `runStarts` (the HTTP API and the console always pass it), the per-user run quotas apply:
 * USER_RUNS_PER_MINUTE counted there, USER_MAX_CONCURRENT_RUNS in the store. 503 without a queue.
 * `version`: run that version of the workflow (versions.ts) instead of the current one. `retry`: retrySeed.ts.
 * `accessTokenId`: the API key that starts it, recorded on the run; its budget applies with the
 * workflow's (monthlyBudgets.ts), to new runs only.
 */
export async function startRun(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  inputs: RunInputs,
  idempotencyKey: string | undefined,
  runStarts?: RunStarts,
  version?: number,
  retry?: RetrySeed,
  accessTokenId?: number,
): Promise<{ run: Run; replayed: boolean }> {
  const machinery = ctx.runs;
  if (!machinery) throw runsNotConfigured();
  const { workflow, deleted } = await findWorkflowForRuns(ctx, userId, workflowId);
  if (deleted) throw workflowNotFound(workflowId);
  // A run asked for a version runs that version's graph, and takes its inputs (404 if there is none).
  const snapshot: GraphSnapshot =
    version === undefined || version === workflow.version
      ? { version: workflow.version, nodes: workflow.nodes, edges: workflow.edges }
      : await versionGraph(ctx, userId, workflowId, version);
  const problems = checkInputs(snapshot.nodes, inputs);
  if (problems.length) throw invalidRunInputs(problems);
  if (idempotencyKey !== undefined) {
    const existing = await store.findRunByIdempotencyKey(ctx.db, userId, workflowId, idempotencyKey);
    if (existing)
      return { run: toRun(await replay(ctx, machinery, existing, inputs, version, retry?.of)), replayed: true };
  }
  await checkBudgets(ctx, workflowId, accessTokenId);
  const row = queuedRunRow(ctx, userId, workflowId, inputs, snapshot, idempotencyKey, retry, accessTokenId);
  try {
    const { seq: _seq, ...insert } = row;
    // Quotas count new runs only: an Idempotency-Key replay above answered without one.
    if (runStarts) {
      const { USER_RUNS_PER_MINUTE: perMinute, USER_MAX_CONCURRENT_RUNS: maxConcurrent } = ctx.config;
      const retryAfter = runStarts.hit(`user:${userId}`);
      if (retryAfter !== null) throw tooManyRunsPerMinute(perMinute, retryAfter);
      // The quota's transaction also locks the workflow's row: a delete since the read above is seen there.
      const inserted = await insertRunWithinLimit(ctx.db, insert, maxConcurrent);
      if (inserted === 'workflow_deleted') throw workflowNotFound(workflowId);
      if (inserted === 'over_limit') throw tooManyConcurrentRuns(maxConcurrent);
    } else {
      await runsStore(ctx.db).start(insert);
    }
  } catch (err) {
    // Two concurrent requests with the same key: the loser answers with the winner's run.
    if (idempotencyKey === undefined || !isUniqueViolation(err)) throw err;
    const winner = await store.findRunByIdempotencyKey(ctx.db, userId, workflowId, idempotencyKey);
    if (!winner) throw err;
    return { run: toRun(await replay(ctx, machinery, winner, inputs, version, retry?.of)), replayed: true };
  }
  if (retry) await seedSteps(ctx, row.id, retry.steps(snapshot), QUEUE_UNAVAILABLE);
  // Without the quota's lock: a delete that came between the workflow read above and the insert did
  // not see this run in its cancel sweep (cancelRunsOfDeletedWorkflow): it is cancelled here
  // instead, never enqueued. One of the two always sees the other: the delete marks the workflow
  // before it lists its runs.
  if (!runStarts && (await isWorkflowDeletedForRuns(ctx, userId, workflowId).catch(() => true))) {
    await runsStore(ctx.db).cancel(row.id, ctx.now(), CANCELLED_BY_DELETE, runEndEvents);
    throw workflowNotFound(workflowId);
  }
  // A retry's run continues this request's trace, linked to the first of the run it retries.
  const link = retry?.traceContext ? { traceparent: retry.traceContext, reason: 'retry_of' as const } : undefined;
  return { run: toRun(await enqueueOrFail(ctx, machinery, row, link)), replayed: false };
}

/** The row of a run about to be queued; `trace_context`: a later resume or retry links its span to this one. */
function queuedRunRow(
  ctx: RunContext,
  userId: number,
  workflowId: string,
  inputs: RunInputs,
  snapshot: GraphSnapshot,
  idempotencyKey: string | undefined,
  retry: RetrySeed | undefined,
  accessTokenId: number | undefined,
): RunRow {
  return {
    seq: 0,
    id: newRunId(),
    workflow_id: workflowId,
    user_id: userId,
    status: 'queued',
    inputs: JSON.stringify(inputs),
    graph: JSON.stringify(snapshot),
    output: null,
    error: null,
    usage: null,
    idempotency_key: idempotencyKey ?? null,
    attempts: 0,
    created_at: ctx.now(),
    started_at: null,
    finished_at: null,
    duration_ms: null,
    ...(retry ? { retry_of: retry.of } : {}),
    ...(accessTokenId !== undefined ? { access_token_id: accessTokenId } : {}),
    trace_context: currentTraceparent(),
  };
}

/** Runs of a deleted (not yet purged) workflow stay readable. */
export async function runOf(ctx: WorkflowContext, userId: number, workflowId: string, runId: string): Promise<RunRow> {
  await isWorkflowDeletedForRuns(ctx, userId, workflowId); // its 404
  const row = await store.findRunOfWorkflow(ctx.db, userId, workflowId, runId);
  if (!row) throw runNotFound(runId);
  return row;
}

/**
 * A run with its logs: what polling clients call over and over, so two statements, the run (joined
 * with its workflow's deletion) and then its steps. Anything unusual (no such run, a deleted
 * workflow) takes the general path, which answers the right 404.
 *
 * The steps are read after the run: a worker writes a run's last steps before it ends the run, so
 * a run read as ended always comes with its whole log. (Read side by side, the steps could be read
 * before that last write and the run after its end, and an ended run's steps had to be read a
 * third time; in that order the last poll costs no more time, and one statement less.)
 */
export async function getRun(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  runId: string,
): Promise<RunDetail> {
  const row = await readableRun(ctx, userId, workflowId, runId);
  const { steps, truncated } = await store.listStepsBounded(ctx.db, runId, ctx.config.RUN_DETAIL_MAX_ITEM_STEPS);
  return { ...toRun(row), logs: steps.map(toRunStep), ...(truncated ? { logs_truncated: true } : {}) };
}

export async function readableRun(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  runId: string,
): Promise<RunRow> {
  const found = await store.findRunOfWorkflowWithDeletion(ctx.db, userId, workflowId, runId);
  return found && found.workflowDeletedAt === null ? found.run : runOf(ctx, userId, workflowId, runId);
}

/** What a run's timeline marks on its nodes: each start, retry and wait, in the order they happened. */
export type RunMark = Awaited<ReturnType<typeof listRunEventsOfTypes>>[number];
const MARK_TYPES = ['node.started', 'node.retry', 'node.waiting'] as const;
/** Marks read at most: a few per node and attempt (a map's items send none), so this bounds only a pathological run. */
const MARKS_MAX = 5000;

/**
 * A run with its logs and the graph snapshot it ran (the console draws it); 404 as getRun. With
 * `marks`, also its nodes' starts, retries and waits from its events (the console's timeline).
 */
export async function getRunWithGraph(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  runId: string,
  options: { marks?: boolean } = {},
): Promise<{ run: RunDetail; graph: GraphSnapshot; marks: RunMark[] }> {
  const row = await runOf(ctx, userId, workflowId, runId);
  // Bounded as getRun is: a map of many items is shown in part, not read whole into memory.
  const [{ steps, truncated }, marks] = await Promise.all([
    store.listStepsBounded(ctx.db, runId, ctx.config.RUN_DETAIL_MAX_ITEM_STEPS),
    options.marks ? listRunEventsOfTypes(ctx.db, runId, MARK_TYPES, MARKS_MAX) : [],
  ]);
  const run = { ...toRun(row), logs: steps.map(toRunStep), ...(truncated ? { logs_truncated: true } : {}) };
  return { run, graph: JSON.parse(row.graph) as GraphSnapshot, marks };
}

/** The newest run of each of the user's workflows named (the console's list shows its status). */
export async function latestRuns(
  ctx: WorkflowContext,
  userId: number,
  workflowIds: readonly string[],
): Promise<Map<string, Run>> {
  const rows = await store.latestRunsOfWorkflows(ctx.db, userId, workflowIds);
  return new Map([...rows].map(([id, row]) => [id, toRun(row)]));
}

export async function listRuns(
  ctx: WorkflowContext,
  userId: number,
  workflowId: string,
  request: { page: number; perPage: number; search?: string },
): Promise<{ data: Run[]; meta: PageMeta }> {
  await isWorkflowDeletedForRuns(ctx, userId, workflowId); // its 404
  const [total, rows] = await Promise.all([
    store.countRuns(ctx.db, userId, workflowId, request.search),
    store.listRunsNewestFirst(ctx.db, userId, workflowId, {
      offset: (request.page - 1) * request.perPage,
      limit: request.perPage,
      ...(request.search ? { search: request.search } : {}),
    }),
  ]);
  return {
    data: rows.map(toRun),
    meta: { page: request.page, per_page: request.perPage, total, total_pages: Math.ceil(total / request.perPage) },
  };
}

export const CANCELLED_BY_USER = JSON.stringify(new RunFailure('cancelled', 'The run was cancelled.'));

export const CANCELLED_BY_DELETE = JSON.stringify({
  code: 'cancelled',
  message: 'The run was cancelled: its workflow was deleted.',
  node_id: null,
});

/**
 * Cancels every queued or running run of a workflow that was just deleted, so none keeps calling a
 * model for a run that is about to be 404. Workers elsewhere notice within a second (runner.ts).
 */
export async function cancelRunsOfDeletedWorkflow(ctx: RunContext, workflowId: string): Promise<number> {
  const now = ctx.now();
  let cancelled = 0;
  for (const id of await store.listUnfinishedRunsOfWorkflow(ctx.db, workflowId)) {
    if (await runsStore(ctx.db).cancel(id, now, CANCELLED_BY_DELETE, runEndEvents)) cancelled++;
    announceRunEnded(ctx, id);
  }
  return cancelled;
}

/** queued|running -> cancelled; a terminal run is a 409. The worker notices and stops (runner.ts). */
export async function cancelRun(ctx: RunContext, userId: number, workflowId: string, runId: string): Promise<Run> {
  const row = await runOf(ctx, userId, workflowId, runId);
  const now = ctx.now();
  if (!(await runsStore(ctx.db).cancel(row.id, now, CANCELLED_BY_USER, runEndEvents))) {
    const current = (await store.findRun(ctx.db, row.id)) ?? row;
    throw runAlreadyFinished(runId, current.status);
  }
  if (row.status === 'waiting') await closeWaitingSteps(ctx.db, row.id, now); // no worker is there to close them
  announceRunEnded(ctx, row.id);
  return toRun((await store.findRun(ctx.db, row.id))!);
}

/**
 * Tells this process's worker (it aborts the run's execution at once) and every other process
 * (they notice within a second) that a run ended outside a worker: cancelled.
 */
function announceRunEnded(ctx: RunContext, runId: string): void {
  ctx.runs?.runner?.abortLocal(runId);
  ctx.runs?.queue
    .announceRunEnded(runId)
    .catch((err: unknown) => ctx.logger.warn({ err, runId }, 'run end NOTIFY failed'));
}
