// Which of a run's nodes a takeover (attempt.ts) keeps as finished though they failed.
import { ERROR_CASE } from '../nodes/errorRoutes.ts';
import type { GraphSnapshot } from './runShapes.ts';
import { stepOf } from './steps/index.ts';
import type { RunRow } from './store.ts';

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
