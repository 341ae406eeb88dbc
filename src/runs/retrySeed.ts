// What startRun needs to start a run that retries another (retry.ts): the run it retries and the
// steps it reuses, stored before the run's job exists so its first attempt resumes after them.
import type { Knex } from 'knex';
import type { NewRunEvent } from './events.ts';
import { toRunStep, type GraphSnapshot } from './runShapes.ts';
import { runsStore } from './runsStore.ts';
import type { NewStepRow, RunRow, RunStepRow } from './store.ts';

/** A reused step as stored for the new run, but for the new run's id (set by startRun). */
export type SeedStep = Omit<NewStepRow, 'run_id'>;

/** The run retried, and the steps of it reused on `snapshot` (the graph the new run runs). */
export interface RetrySeed {
  of: string;
  /** The retried run's first `traceparent` (runs.trace_context): the retry's span links to it. */
  traceContext?: string | null | undefined;
  steps(snapshot: GraphSnapshot): SeedStep[];
}

/** Stores a retry's reused steps; when they cannot be stored the run fails with `error`, never enqueued without them. */
export async function seedSteps(
  ctx: { db: Knex; now(): number },
  runId: string,
  steps: SeedStep[],
  error: string,
): Promise<void> {
  try {
    await runsStore(ctx.db).appendSteps(steps.map((step) => ({ ...step, run_id: runId })));
  } catch (err) {
    await runsStore(ctx.db).failUnfinished(runId, error, ctx.now());
    throw err;
  }
}

/**
 * What a retry's first attempt tells its stream after `run.status`: the run it retries and the
 * nodes it reuses (`run.reused`), then each reused node's `node.finished` as that run logged it,
 * so a follower of the stream sees every node end, as for any run.
 */
export function reusedEvents(run: Pick<RunRow, 'retry_of'>, steps: readonly RunStepRow[]): NewRunEvent[] {
  const reused = steps.filter((step) => step.reused_from);
  if (!run.retry_of || !reused.length) return [];
  return [
    { type: 'run.reused', data: { retry_of: run.retry_of, node_ids: reused.map((step) => step.node_id) } },
    ...reused.map((step) => {
      const { output_value: value, ...wire } = toRunStep(step);
      return {
        type: 'node.finished' as const,
        data: {
          node_id: wire.node_id,
          node_type: wire.node_type,
          status: wire.status,
          finished_at: wire.finished_at,
          output: wire.output,
          ...(value === undefined ? {} : { output_value: value }),
          usage: wire.usage,
          cost: wire.cost ?? null,
          error: null,
          reused_from: step.reused_from,
          ...(wire.case !== undefined ? { case: wire.case } : {}),
        },
      };
    }),
  ];
}
