// The worker side of a run: one pg-boss job = one attempt at one run. It claims the run with a
// conditional update, executes the graph snapshot writing per-node logs, and ends the run with a
// conditional update that only its own attempt can make (the `attempts` column is the fence).
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { executeGraph, RunFailure, type StepReport, type WorkflowNode } from './executor.ts';
import type { ModelRouter } from './providers/index.ts';
import type { RunJobContext, RunQueue } from './queue.ts';
import type { GraphSnapshot } from './service.ts';
import * as store from './store.ts';

export const PREVIEW_CHARS = 500;
const STATUS_POLL_MS = 1000;

export interface RunnerDeps {
  db: Knex;
  models: ModelRouter;
  logger: Logger;
  runTimeoutSeconds: number;
  now?: () => number;
}

export interface Runner {
  /** The pg-boss job handler. Throws only when the attempt was interrupted, so pg-boss retries it. */
  handle(runId: string, job: RunJobContext): Promise<void>;
  /** Stops this process's execution of a cancelled run at once (in-flight provider calls included). */
  abortLocal(runId: string): void;
}

export function preview(text: string | null): string | null {
  if (text === null) return null;
  return text.length > PREVIEW_CHARS ? text.slice(0, PREVIEW_CHARS - 1) + '…' : text;
}

const WORKER_LOST = (retries: number) =>
  JSON.stringify({
    code: 'worker_lost',
    message: `The worker running this run stopped responding ${retries + 1} times; the run was not retried again.`,
    node_id: null,
  });

/** The job was taken away from this worker (pg-boss expiry or shutdown): not the run's fault. */
class Interrupted extends Error {}

export function createRunner(deps: RunnerDeps): Runner {
  const now = deps.now ?? Date.now;
  const local = new Map<string, AbortController>();

  /** Claims the run for this job; returns the attempt number to fence writes with, or null to ack and stop. */
  async function claim(runId: string, job: RunJobContext): Promise<number | null> {
    const run = await store.findRun(deps.db, runId);
    if (!run) {
      deps.logger.warn({ runId }, 'job for an unknown run; dropped');
      return null;
    }
    if (store.TERMINAL.includes(run.status)) return null; // e.g. cancelled while queued
    if (run.status === 'queued') {
      const attempt = await store.claimQueuedRun(deps.db, runId, now());
      if (attempt !== null) return attempt;
      return claim(runId, job); // cancelled or claimed meanwhile: look again
    }
    // `running`: a first delivery finding it so is a duplicate of a live job; leave it to that one.
    if (job.retryCount === 0) return null;
    // A retry: the previous attempt's worker died (missed heartbeats) or threw.
    if (job.lastAttempt) {
      await store.failUnfinishedRun(deps.db, runId, WORKER_LOST(job.retryCount), now());
      deps.logger.error({ runId, retryCount: job.retryCount }, 'run failed: worker lost on the last attempt');
      return null;
    }
    if (!(await store.takeOverRun(deps.db, runId, run.attempts, now()))) return claim(runId, job);
    await store.deleteSteps(deps.db, runId); // re-run from scratch: the graph is re-executed whole
    deps.logger.warn({ runId, retryCount: job.retryCount }, 'run taken over after its worker was lost');
    return run.attempts + 1;
  }

  async function stillMine(runId: string, attempt: number): Promise<boolean> {
    const current = await store.runStatusAndAttempt(deps.db, runId);
    return current?.status === 'running' && current.attempts === attempt;
  }

  async function execute(runId: string, attempt: number, job: RunJobContext): Promise<void> {
    const run = (await store.findRun(deps.db, runId))!;
    const snapshot = JSON.parse(run.graph) as GraphSnapshot;
    const inputs = JSON.parse(run.inputs) as Record<string, string>;
    const startedAt = run.started_at ?? now();

    const controller = new AbortController();
    local.set(runId, controller);
    const timer = setTimeout(
      () => controller.abort(new RunFailure('timeout', `The run took longer than ${deps.runTimeoutSeconds} s (RUN_TIMEOUT_SECONDS).`)),
      deps.runTimeoutSeconds * 1000,
    );
    // Another process's cancel: seen between nodes by shouldContinue, and within a second here
    // for a node that is waiting on a provider.
    const poll = setInterval(() => {
      stillMine(runId, attempt).then(
        (mine) => mine || controller.abort(new RunFailure('cancelled', 'The run was cancelled.')),
        (err: unknown) => deps.logger.warn({ err, runId }, 'run status poll failed'),
      );
    }, STATUS_POLL_MS);
    const onJobAbort = () => controller.abort(new Interrupted('the job was taken away from this worker'));
    job.signal.addEventListener('abort', onJobAbort, { once: true });

    const stepStart = async (node: WorkflowNode, input: string) => {
      await store.insertStep(deps.db, {
        run_id: runId,
        node_id: node.id,
        node_type: node.type,
        status: 'running',
        started_at: now(),
        finished_at: null,
        input_preview: preview(input),
        output_preview: null,
        usage: null,
        error: null,
      });
    };
    const stepEnd = async (report: StepReport) => {
      await store.finishStep(deps.db, runId, report.nodeId, {
        status: report.status,
        finished_at: now(),
        output_preview: preview(report.output),
        usage: report.usage ? JSON.stringify(report.usage) : null,
        error: report.error ? JSON.stringify(report.error.toJSON()) : null,
      });
    };

    let end: { status: 'completed' | 'failed' | 'cancelled'; output: string | null; error: string | null };
    try {
      const { output } = await executeGraph(snapshot, inputs, deps.models, {
        signal: controller.signal,
        hooks: { onStepStart: stepStart, onStepEnd: stepEnd, shouldContinue: () => stillMine(runId, attempt) },
      });
      end = { status: 'completed', output: JSON.stringify(output), error: null };
    } catch (err) {
      if (controller.signal.reason instanceof Interrupted) throw controller.signal.reason;
      const failure = err instanceof RunFailure ? err : new RunFailure('internal_error', (err as Error).message);
      end = { status: failure.code === 'cancelled' ? 'cancelled' : 'failed', output: null, error: JSON.stringify(failure.toJSON()) };
    } finally {
      clearTimeout(timer);
      clearInterval(poll);
      job.signal.removeEventListener('abort', onJobAbort);
      local.delete(runId);
    }
    const finishedAt = now();
    const finished = await store.finishRun(deps.db, runId, attempt, {
      ...end,
      finished_at: finishedAt,
      duration_ms: Math.max(0, finishedAt - startedAt),
    });
    // Not finished by us: the run was cancelled (its state already says so) or taken over.
    deps.logger.info({ runId, status: finished ? end.status : 'superseded', attempt }, 'run ended');
  }

  return {
    async handle(runId, job) {
      const attempt = await claim(runId, job);
      if (attempt === null) return;
      await execute(runId, attempt, job);
    },
    abortLocal(runId) {
      local.get(runId)?.abort(new RunFailure('cancelled', 'The run was cancelled.'));
    },
  };
}

export const SWEEP_INTERVAL_MS = 30_000;
const QUEUED_GRACE_MS = 30_000;
const RUNNING_GRACE_MS = 120_000;

/**
 * The backstop behind "no accepted run is ever lost", run by every worker every 30 s:
 * - a run queued for 30 s may have no job (the API process died between storing the run and
 *   enqueueing it): enqueue it again; the queue keeps one job per run, so this is a no-op when
 *   its job exists;
 * - a run `running` far past RUN_TIMEOUT_SECONDS has no live worker (its own timer would have
 *   ended it) and no pg-boss retry left: fail it with `worker_lost`.
 */
export async function sweepStuckRuns(deps: RunnerDeps & { queue: Pick<RunQueue, 'enqueue'> }): Promise<void> {
  const now = (deps.now ?? Date.now)();
  for (const id of await store.listRunsStuckSince(deps.db, 'queued', now - QUEUED_GRACE_MS, 100)) {
    await deps.queue.enqueue(id);
  }
  const cutoff = now - deps.runTimeoutSeconds * 1000 - RUNNING_GRACE_MS;
  for (const id of await store.listRunsStuckSince(deps.db, 'running', cutoff, 100)) {
    const error = JSON.stringify({ code: 'worker_lost', message: 'The worker running this run stopped and the run was not retried.', node_id: null });
    if (await store.failUnfinishedRun(deps.db, id, error, now)) deps.logger.error({ runId: id }, 'run failed: worker lost');
  }
}
