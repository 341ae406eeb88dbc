// Which of a run's nodes a takeover (attempt.ts) keeps as finished though they failed, and the
// takeover that continues a run queued again after it waited.
import type { RunsStore } from './runsStore.ts';
import type { Retried } from './storeRetry.ts';
import { ERROR_CASE } from '../nodes/errorRoutes.ts';
import type { GraphSnapshot } from './runShapes.ts';
import { stepOf } from './steps/index.ts';
import type { KeptStep, RunRow } from './store.ts';

/**
 * The run's nodes that go on past their failure (their step's `failureIsFinal`): such a failed step
 * is finished. Not those whose failure gives a value (`default`, or their error down `case: error`
 * edges): the log keeps no output of a failed step, so they run again.
 */
export function continuedNodes(run: RunRow): string[] {
  const { nodes, edges } = JSON.parse(run.graph) as GraphSnapshot;
  const routed = new Set(edges.flatMap((e) => (e.case === ERROR_CASE ? [e.from] : [])));
  return nodes.flatMap((n) => (stepOf(n).failureIsFinal?.(n) === true && !routed.has(n.id) ? [n.id] : []));
}

/**
 * A run queued again after it waited (an approval answered or timed out): claimed, then taken over
 * as after a lost worker, so the new attempt resumes after the steps the earlier ones finished.
 * The claim keeps its first start, so its duration spans the wait.
 */
export async function continueAfterWaiting(
  deps: { store: RunsStore; stored: Retried; now(): number },
  run: RunRow,
): Promise<{ run: RunRow; claimed: true; kept: readonly KeptStep[] } | null> {
  const startedAt = run.started_at ?? deps.now();
  if (!(await deps.stored(() => deps.store.claim(run.id, run.attempts, startedAt)))) return null;
  const kept = await deps.stored(() => deps.store.takeOver(run.id, run.attempts + 1, deps.now(), continuedNodes(run)));
  if (!kept) return null;
  return { run: { ...run, status: 'running', started_at: startedAt, attempts: run.attempts + 2 }, claimed: true, kept };
}
