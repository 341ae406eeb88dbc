// Retrying a failed or cancelled run (openapi.yaml retryRun): a new run, linked to it by
// `retry_of`, that resumes it rather than starting over. The steps the run completed are copied
// into the new run (`reused_from`) before it is enqueued, and its first attempt takes them up as a
// run taken over after a crash takes up its earlier attempts' steps (attempt.ts): no node whose
// output is reused runs again, so no provider is called twice for it.
import { runNotFound, runNotRetryable } from '../shared/errors.ts';
import type { SeedStep } from './retrySeed.ts';
import { snapshotVersion, type GraphSnapshot, type Run } from './runShapes.ts';
import { startRun, type RunContext, type RunInputs, type RunStarts } from './service.ts';
import * as store from './store.ts';
import type { RunStepRow } from './store.ts';
import { canonicalJson } from './values.ts';
import { isWorkflowDeletedForRuns } from '../workflows/service.ts';

type Node = GraphSnapshot['nodes'][number];
type Edge = GraphSnapshot['edges'][number];

/** What leads into `nodeId`, as comparable text: its incoming edges, in a stable order. */
const incomingOf = (edges: readonly Edge[], nodeId: string): string =>
  edges
    .filter((edge) => edge.to === nodeId)
    .map((edge) => canonicalJson(edge))
    .sort()
    .join('\n');

/**
 * The steps of the run retried (ran `before`, logged `steps`) the new run reuses on `after`: a
 * node's step is reused when it completed with its output logged whole, the node is the same in
 * both graphs (id, type, config, error handling: its whole definition), the same edges lead into
 * it, and every node upstream of it is reused too (else its input could differ). On the same
 * version that is every completed step whose upstream completed. Steps inside a map's items or a
 * called workflow (`m[0].x`, `w.x`) are not nodes of the graph: the map or workflow node is
 * reused whole or runs again whole.
 */
export function reusableSteps(
  before: GraphSnapshot,
  after: GraphSnapshot,
  steps: readonly RunStepRow[],
  retryOf: string,
): SeedStep[] {
  const oldNodes = new Map(before.nodes.map((node) => [node.id, node]));
  const newNodes = new Map(after.nodes.map((node) => [node.id, node]));
  const done = new Map(
    steps.filter((step) => step.status === 'completed' && !step.truncated).map((step) => [step.node_id, step]),
  );
  const verdicts = new Map<string, boolean>();
  const reusable = (node: Node): boolean => {
    const known = verdicts.get(node.id);
    if (known !== undefined) return known;
    verdicts.set(node.id, false); // a cycle (refused at save) reuses nothing
    const old = oldNodes.get(node.id);
    const verdict =
      done.has(node.id) &&
      old !== undefined &&
      canonicalJson(old) === canonicalJson(node) &&
      incomingOf(before.edges, node.id) === incomingOf(after.edges, node.id) &&
      after.edges.filter((edge) => edge.to === node.id).every((edge) => reusableId(edge.from));
    verdicts.set(node.id, verdict);
    return verdict;
  };
  const reusableId = (id: string): boolean => {
    const node = newNodes.get(id);
    return node !== undefined && reusable(node);
  };
  // In the order the run retried logged them: its execution order, which the new log keeps.
  return steps
    .filter((step) => newNodes.has(step.node_id) && done.get(step.node_id) === step && reusableId(step.node_id))
    .map(({ id: _id, run_id: _runId, ...step }) => ({ ...step, error: null, reused_from: retryOf }));
}

/**
 * Starts the retry of `owner`'s failed or cancelled run `runId` (404 when it is not theirs, 409
 * `run_not_retryable` when it is queued, running or completed): its inputs, on its version unless
 * `version` names another, reusing what reusableSteps allows; otherwise as startRun (quotas,
 * budgets, Idempotency-Key: a key already used for another start is a 409).
 */
export async function retryRun(
  ctx: RunContext,
  owner: { userId: number; workflowId: string },
  runId: string,
  idempotencyKey: string | undefined,
  runStarts: RunStarts | undefined,
  version?: number,
  accessTokenId?: number,
): Promise<{ run: Run; replayed: boolean }> {
  const { userId, workflowId } = owner;
  await isWorkflowDeletedForRuns(ctx, userId, workflowId); // its 404 for a workflow that is not theirs
  const retried = await store.findRunOfWorkflow(ctx.db, userId, workflowId, runId);
  if (!retried) throw runNotFound(runId);
  if (retried.status !== 'failed' && retried.status !== 'cancelled') throw runNotRetryable(runId, retried.status);
  const steps = await store.listSteps(ctx.db, runId);
  const before = JSON.parse(retried.graph) as GraphSnapshot;
  const inputs = JSON.parse(retried.inputs) as RunInputs;
  return startRun(
    ctx,
    userId,
    workflowId,
    inputs,
    idempotencyKey,
    runStarts,
    version ?? snapshotVersion(retried.graph),
    {
      of: runId,
      traceContext: retried.trace_context,
      steps: (after) => reusableSteps(before, after, steps, runId),
    },
    accessTokenId,
  );
}
