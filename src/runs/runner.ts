// The worker side of a run: one pg-boss job = one attempt at one run (attempt.ts). The runner
// begins the attempt, executes its graph snapshot under the run's time limit, and has the attempt
// end it; it watches the runs this process executes for a cancel made elsewhere, and sweeps the
// runs no attempt will end.
import type { AppContext } from '../context.ts';
import { Attempt, beginAttempt, type AttemptDeps, type Outcome } from './attempt.ts';
import { abandonedRunError } from './failures.ts';
import { watchForCancels, type CancelWatch } from './cancelWatch.ts';
import { executeGraph, WaitingRun, type ExecuteOptions } from './executor.ts';
import type { AwaitingAnswer } from './awaitingAnswer.ts';
import { approvalLookup, pauseAttempt } from './pause.ts';
import { listExpiredApprovals, settleApproval } from './approvalsStore.ts';
import { httpNodeDeps } from './httpNodeDeps.ts';
import { RunFailure } from '../shared/errors.ts';
import { runBudget } from './compute/budget.ts';
import { RunCaps } from './compute/runCaps.ts';
import { calledWorkflows } from './calledWorkflows.ts';
import type { ModelRouter } from './providers/index.ts';
import type { RunJobContext, RunQueue } from './queue.ts';
import { runsStore } from './runsStore.ts';
import { runEndEvents, toRun, toRunStep, type RunDetail } from './service.ts';
import { STORE_OUTAGE_BUDGET_MS, StoreUnavailable, withStore } from './storeRetry.ts';
import * as store from './store.ts';
import { observeRunFinished } from '../ops/metrics.ts';
import type { NewStepRow, RunRow } from './store.ts';
import { inRunSpan, withRunAttempt, type Span } from '../shared/tracing.ts';
import { tracedModels } from './tracedModels.ts';

/** How an attempt executes its graph: its stop, hooks, budgets, resumed steps and the workflows it may call. */
function executionOptions(ctx: RunnerContext, attempt: Attempt): ExecuteOptions {
  return {
    signal: attempt.controller.signal,
    hooks: attempt.hooks(),
    // compute and size caps, the owner's share of the compute pool, and the caps on steps and map items
    budget: { ...runBudget(ctx.config, String(attempt.run.user_id)), caps: new RunCaps(ctx.config) },
    resumed: attempt.resumed,
    http: httpNodeDeps(ctx, attempt.run.user_id), // http_request: the outbound policy, the owner's secrets
    workflows: calledWorkflows(ctx.db, Number(attempt.run.user_id)), // the owner's only
    calls: [attempt.run.workflow_id],
    approvals: approvalLookup(ctx.db, attempt.run.id),
    // From the stored run, not the clock: a run taken over renders the same values.
    context: {
      run: { id: attempt.run.id, created_at: new Date(attempt.run.created_at).toISOString() },
      workflow: { id: attempt.run.workflow_id, version: attempt.snapshot.version },
    },
  };
}

/** What a worker reads: the store, RUN_TIMEOUT_SECONDS, the logger, the clock. */
export type RunnerContext = Pick<AppContext, 'db' | 'config' | 'logger' | 'now'> & Partial<Pick<AppContext, 'sealer'>>;

/** Where a worker tells of the runs it ended (`Prefer: wait`) and of the events it stored (event streams): NOTIFY. */
export type RunAnnouncer = Pick<RunQueue, 'announceRunEnded' | 'announceRunEvents'>;

/** `announce` made one that never throws: a failed NOTIFY is logged. */
function quietly(
  ctx: RunnerContext,
  what: string,
  announce: (runId: string) => Promise<void>,
): (runId: string) => void {
  return (runId) =>
    void announce(runId).catch((err: unknown) => ctx.logger.warn({ err, runId }, `${what} NOTIFY failed`));
}

export interface Runner {
  /** The pg-boss job handler. Throws only when the attempt was interrupted, so pg-boss retries it. */
  handle(runId: string, job: RunJobContext): Promise<void>;
  /** Stops this process's execution of a cancelled run at once (in-flight provider calls included). */
  abortLocal(runId: string): void;
  /**
   * The run this process is about to enqueue, as stored: if this process's worker gets its job,
   * it begins the attempt without reading it back (graph and inputs never change after the insert).
   */
  expect(run: RunRow): void;
  /**
   * A run this process's worker ended a moment ago, as the store now has it (run and log), for a
   * `Prefer: wait` request of this process woken by that end: it answers without reading it back.
   * Undefined when not ended here recently (or too large to keep): read the store.
   */
  endedHere(runId: string): EndedRun | undefined;
}

/** A run as its worker ended it: its owner and workflow (the reader checks them), and its wire shape. */
export interface EndedRun {
  userId: number;
  workflowId: string;
  detail: RunDetail;
}

/** Runs handed over by `expect`, at most this many (the rest are read from the store). */
const HANDOVER_MAX_RUNS = 256;
/** The largest run (characters of its graph, inputs, output and logs) kept in memory, handed over or ended here. */
const KEPT_RUN_MAX_CHARS = 64 * 1024;
/** Runs kept by `endedHere`: a waiter reads its run right after the end's notice, so the last few suffice. */
const ENDED_HERE_MAX_RUNS = 64;

/** The job was taken away from this worker (pg-boss expiry or shutdown): not the run's fault. */
class Interrupted extends Error {}

/** A map that forgets its oldest entry past `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

/** Keeps the run this worker just ended, with its whole log, unless it is large (for `endedHere`). */
function keepEnded(endedHere: Map<string, EndedRun>, ended: RunRow, steps: readonly NewStepRow[]): void {
  const size =
    ended.graph.length +
    ended.inputs.length +
    (ended.output?.length ?? 0) +
    steps.reduce((n, s) => n + (s.input_preview?.length ?? 0) + (s.output_preview?.length ?? 0), 0);
  if (size > KEPT_RUN_MAX_CHARS) return;
  const detail = { ...toRun(ended), logs: steps.map((step) => toRunStep({ id: 0, ...step })) };
  remember(endedHere, ended.id, { userId: ended.user_id, workflowId: ended.workflow_id, detail }, ENDED_HERE_MAX_RUNS);
}

/** The execution stopped at approval nodes waiting for their answers. */
interface Waiting {
  status: 'waiting';
  waits: readonly AwaitingAnswer[];
}

/** Executes the attempt's graph until it ends, fails, or is stopped: the run's outcome. Throws when the attempt was taken away. */
async function execute(
  ctx: RunnerContext,
  models: ModelRouter,
  executing: CancelWatch,
  attempt: Attempt,
  job: RunJobContext,
): Promise<Outcome | Waiting> {
  const { controller } = attempt;
  const timer = setTimeout(
    () =>
      controller.abort(
        new RunFailure(
          'timeout',
          `The run took longer than ${ctx.config.RUN_TIMEOUT_SECONDS} s (RUN_TIMEOUT_SECONDS).`,
        ),
      ),
    ctx.config.RUN_TIMEOUT_SECONDS * 1000,
  );
  const onJobAbort = () => controller.abort(new Interrupted('the job was taken away from this worker'));
  job.signal.addEventListener('abort', onJobAbort, { once: true });
  executing.watch(attempt);
  try {
    const { output } = await executeGraph(
      attempt.snapshot,
      attempt.inputs,
      attempt.models(models),
      executionOptions(ctx, attempt),
    );
    return { status: 'completed', output: JSON.stringify(output), error: null };
  } catch (err) {
    if (controller.signal.reason instanceof Interrupted || controller.signal.reason instanceof StoreUnavailable) {
      attempt.discard();
      throw controller.signal.reason;
    }
    if (err instanceof WaitingRun) return { status: 'waiting', waits: err.waits };
    const failure = err instanceof RunFailure ? err : new RunFailure('internal_error', (err as Error).message);
    return {
      status: failure.code === 'cancelled' ? 'cancelled' : 'failed',
      output: null,
      error: JSON.stringify(failure.toJSON()),
    };
  } finally {
    clearTimeout(timer);
    attempt.stop();
    executing.unwatch(attempt);
    job.signal.removeEventListener('abort', onJobAbort);
  }
}

/** A worker's runner; `announcer` (the queue) tells other processes of its runs' ends and events. */
export function createRunner(ctx: RunnerContext, models: ModelRouter, announcer?: RunAnnouncer): Runner {
  const announceEnded = announcer ? quietly(ctx, 'run end', (id) => announcer.announceRunEnded(id)) : () => {};
  const deps: AttemptDeps = {
    db: ctx.db,
    store: runsStore(ctx.db),
    // A store call of an attempt: an outage shorter than the budget only delays it.
    stored: (fn) => withStore(fn, STORE_OUTAGE_BUDGET_MS, ctx.logger),
    now: () => ctx.now(),
    logger: ctx.logger,
    announceEvents: announcer ? quietly(ctx, 'run events', (id) => announcer.announceRunEvents(id)) : () => {},
    maxEvents: ctx.config.RUN_MAX_EVENTS,
  };
  const executing = watchForCancels(ctx);
  models = tracedModels(models);
  const handedOver = new Map<string, RunRow>();
  const endedHere = new Map<string, EndedRun>();
  return {
    handle: (runId, job) => inRunSpan(runId, job, (span) => handle(runId, job, span)),
    abortLocal(runId) {
      executing.get(runId)?.controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
    },
    endedHere: (runId) => endedHere.get(runId),
    expect(run) {
      if (run.graph.length + run.inputs.length <= KEPT_RUN_MAX_CHARS)
        remember(handedOver, run.id, run, HANDOVER_MAX_RUNS);
    },
  };

  async function handle(runId: string, job: RunJobContext, span: Span): Promise<void> {
    const known = handedOver.get(runId);
    handedOver.delete(runId);
    const held = await beginAttempt(deps, runId, job, known, announceEnded);
    if (held === null) return;
    const attempt = new Attempt(deps, held);
    span.setAttributes({ 'workflow.id': attempt.run.workflow_id, 'run.attempt': attempt.attempt });
    const outcome = await withRunAttempt(attempt.attempt, () => execute(ctx, models, executing, attempt, job));
    span.setAttribute('run.status', outcome.status);
    if (outcome.status === 'waiting') {
      // Its job ends here: the answer or the timeout queues the run again.
      const paused = await pauseAttempt(ctx, attempt, outcome.waits);
      if (paused) announceEnded(runId); // `Prefer: wait` answers a waiting run: it will not end by itself
      ctx.logger.info({ runId, status: paused ? 'waiting' : 'superseded', attempt: attempt.attempt }, 'run paused');
      return;
    }
    const end = await attempt.finish(outcome);
    if (end.finished) {
      if (end.log) keepEnded(endedHere, end.ended, end.log);
      announceEnded(runId);
    }
    ctx.logger.info(
      { runId, status: end.finished ? end.ended.status : 'superseded', attempt: attempt.attempt },
      'run ended',
    );
    if (end.finished) observeRunFinished(end.ended.status, end.ended.duration_ms ?? 0);
  }
}

/** Every worker sweeps this often: a stuck run is noticed within seconds. */
export const SWEEP_INTERVAL_MS = 5_000;
/** A run younger than this is never swept (its job is being created, or just claimed it). */
const SWEEP_GRACE_MS = 10_000;

/**
 * The backstop behind "no accepted run is ever lost", run by every worker every few seconds:
 * - a run queued for a few seconds may have no job (the API process died between storing the run
 *   and enqueueing it, or its job failed for good): enqueue it again; the queue keeps one job per
 *   run, so this is a no-op when its job exists;
 * - a run `running` whose job is neither queued nor held (pg-boss gave up on it: its worker died on
 *   the last delivery, or every delivery met a store outage) has no one to finish it: fail it with
 *   the cause of its job's last failure, `store_unavailable` or `worker_lost`, closing its steps;
 * - a run `waiting` at an approval node past its time: the approval times out and the run is
 *   queued again, its node then failing with `approval_timeout` (routed as any node's error).
 */
export async function sweepStuckRuns(
  ctx: RunnerContext,
  queue: Pick<RunQueue, 'enqueue' | 'jobState' | 'announceRunEnded'>,
): Promise<void> {
  const now = ctx.now();
  const announceEnded = quietly(ctx, 'run end', (id) => queue.announceRunEnded(id));
  for (const { id, userId } of await store.listRunsStuckSince(ctx.db, 'queued', now - SWEEP_GRACE_MS, 100)) {
    await queue.enqueue(id, userId); // in its owner's group, as its first job was
  }
  for (const approval of await listExpiredApprovals(ctx.db, now, 100)) {
    if (await settleApproval(ctx.db, approval, { state: 'timed_out' }, now))
      await queue.enqueue(approval.run_id, String(approval.user_id));
  }
  for (const { id } of await store.listRunsStuckSince(ctx.db, 'running', now - SWEEP_GRACE_MS, 100)) {
    const job = await queue.jobState(id);
    if (job.live) continue; // pg-boss notices a dead worker by its heartbeat and retries the job
    const cause = job.lastFailure ?? 'worker_lost';
    if (await runsStore(ctx.db).failUnfinished(id, abandonedRunError(cause), now, runEndEvents)) {
      announceEnded(id);
      ctx.logger.error({ runId: id, cause }, 'run failed: no attempt left');
    }
  }
}
