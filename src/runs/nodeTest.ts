// One node run alone (openapi.yaml testWorkflowNode): the node of the workflow's graph with what
// feeds it pinned. The executor runs a graph of the node and the pinned nodes, those taken up as
// a run taken over takes up the steps it finished (`resumed`), so the node runs exactly as in a
// run (its step, its timeout and retries, the owner's budgets, secrets and called workflows).
// Nothing is stored: the result is answered and logged to the service's log, never a run.
import {
  invalidField,
  nodeNotFound,
  runsNotConfigured,
  tooManyRunsPerMinute,
  workflowNotFound,
  RunFailure,
  type ProblemItem,
} from '../shared/errors.ts';
import { Problem } from '../shared/errors.ts';
import { ulid } from '../shared/ids.ts';
import { addCost, costToWire, type CostNanos } from '../shared/prices.ts';
import { findWorkflowForRuns } from '../workflows/service.ts';
import { runInputOf } from '../nodes/registry.ts';
import { versionGraph } from '../workflows/versions.ts';
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { calledWorkflows } from './calledWorkflows.ts';
import { checkBudgets } from './monthlyBudgets.ts';
import { runBudget } from './compute/budget.ts';
import { RunCaps } from './compute/runCaps.ts';
import { executeGraph } from './executor.ts';
import { httpNodeDeps } from './httpNodeDeps.ts';
import { NO_USAGE, type GraphSnapshot, type RunStep } from './runShapes.ts';
import type { StepReport } from './runState.ts';
import type { RunContext, RunStarts } from './service.ts';

export type NodeTestResult = components['schemas']['NodeTestResult'];
type NodeTestBody = components['schemas']['NodeTestRequest'];

/** What a test reads: the workflows, the run machinery (its model router), the settings and the owner's secrets. */
type TestContext = RunContext & Pick<AppContext, 'config'> & Partial<Pick<AppContext, 'sealer'>>;

/** Pinned values that do not fit the graph: each missing or unknown upstream, as a pointer into the body. */
function pinnedProblems(graph: GraphSnapshot, nodeId: string, upstream: Record<string, unknown>): ProblemItem[] {
  const ids = new Set(graph.nodes.map((node) => node.id));
  const problems: ProblemItem[] = [];
  for (const edge of graph.edges)
    if (edge.to === nodeId && !Object.hasOwn(upstream, edge.from))
      problems.push({
        pointer: `/body/upstream/${edge.from}`,
        message: `is required: node ${edge.from} feeds ${nodeId}`,
      });
  for (const [id, value] of Object.entries(upstream)) {
    const pointer = `/body/upstream/${id.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!ids.has(id)) problems.push({ pointer, message: 'is not a node of this workflow' });
    else if (id === nodeId) problems.push({ pointer, message: 'is the node tested: pin what feeds it' });
    else if (value === null) problems.push({ pointer, message: 'must be a value, not null' });
  }
  return problems;
}

/** Records each step the test makes (the node's, and those inside a map or called workflow) as a run logs it. */
function stepLog(now: () => number) {
  const steps = new Map<string, RunStep>();
  const iso = (ms: number) => new Date(ms).toISOString();
  // What the test's model calls cost, every step's (a map's items, a called workflow's) summed.
  const spent: { cost: CostNanos | null } = { cost: null };
  return {
    steps,
    spent,
    hooks: {
      onStepStart(node: { id: string; type: string }, input: string) {
        steps.set(node.id, {
          ...{ node_id: node.id, node_type: node.type, status: 'running', started_at: iso(now()), finished_at: null },
          ...{ input, output: null, truncated: false, usage: null, error: null },
        });
      },
      onStepEnd(report: StepReport) {
        spent.cost = addCost(spent.cost, report.cost ?? null);
        const started = steps.get(report.nodeId);
        steps.set(report.nodeId, {
          node_id: report.nodeId,
          node_type: report.nodeType,
          status: report.status,
          started_at: started?.started_at ?? null,
          finished_at: iso(now()),
          input: report.input,
          output: report.output,
          ...(report.outputIsJson && report.output !== null
            ? { output_value: JSON.parse(report.output) as unknown }
            : {}),
          truncated: false,
          usage: report.usage,
          cost: report.cost ? costToWire(report.cost) : null,
          error: report.error ? report.error.toJSON() : null,
          ...(report.attempts ? { attempts: report.attempts } : {}),
          ...(report.case !== undefined ? { case: report.case } : {}),
        });
      },
    },
  };
}

/**
 * Runs `nodeId` of `owner`'s workflow (its current graph, or `body.version`'s) on the pinned
 * `upstream` outputs and `inputs`, and answers its result. 404 for a workflow not theirs or a node
 * it lacks, 400 for pinned data that does not fit, 429 when a monthly budget it meets is spent (its
 * model calls cost as a run's do) or past USER_RUNS_PER_MINUTE (a test counts as
 * a run start there), 503 without runs. Bounded by RUN_TIMEOUT_SECONDS, and stopped when `gone` aborts (the client left).
 */
export async function testNode(
  ctx: TestContext,
  owner: { userId: number; workflowId: string },
  nodeId: string,
  body: NodeTestBody,
  runStarts: RunStarts,
  gone?: AbortSignal,
  accessTokenId?: number,
): Promise<NodeTestResult> {
  const { userId, workflowId } = owner;
  const machinery = ctx.runs;
  if (!machinery) throw runsNotConfigured();
  const { workflow, deleted } = await findWorkflowForRuns(ctx, userId, workflowId);
  if (deleted) throw workflowNotFound(workflowId);
  const graph: GraphSnapshot =
    body.version === undefined || body.version === workflow.version
      ? { version: workflow.version, nodes: workflow.nodes, edges: workflow.edges }
      : await versionGraph(ctx, userId, workflowId, body.version);
  const node = graph.nodes.find((n) => n.id === nodeId);
  if (!node) throw nodeNotFound(workflowId, graph.version, nodeId);
  const upstream = body.upstream ?? {};
  const problems = pinnedProblems(graph, nodeId, upstream);
  // A node that reads a run input (text_input) has nothing to answer without it.
  const input = runInputOf(node);
  if (input && !Object.hasOwn(body.inputs ?? {}, input.variable))
    problems.push({ pointer: `/body/inputs/${input.variable}`, message: `is required: node ${nodeId} reads it` });
  if (problems.length === 1)
    throw invalidField(`The pinned data does not fit node ${nodeId}.`, problems[0]!.pointer, problems[0]!.message);
  if (problems.length)
    throw new Problem('invalid_field', `The pinned data does not fit node ${nodeId}.`, { errors: problems });
  await checkBudgets(ctx, workflowId, accessTokenId);
  const retryAfter = runStarts.hit(`user:${userId}`);
  if (retryAfter !== null) throw tooManyRunsPerMinute(ctx.config.USER_RUNS_PER_MINUTE, retryAfter);

  const pinned = graph.nodes.filter((n) => Object.hasOwn(upstream, n.id));
  const edges = graph.edges.filter((e) => e.to === nodeId && Object.hasOwn(upstream, e.from));
  const log = stepLog(ctx.now);
  const startedAt = ctx.now();
  let failure: RunFailure | undefined;
  try {
    await executeGraph(
      { version: graph.version, nodes: [...pinned, node], edges },
      body.inputs ?? {},
      machinery.models,
      {
        signal: AbortSignal.any([AbortSignal.timeout(ctx.config.RUN_TIMEOUT_SECONDS * 1000), ...(gone ? [gone] : [])]),
        hooks: { ...log.hooks, onStepSkipped: () => undefined },
        budget: { ...runBudget(ctx.config, String(userId)), caps: new RunCaps(ctx.config) },
        resumed: new Map(Object.entries(upstream)),
        http: httpNodeDeps(ctx, userId),
        workflows: calledWorkflows(ctx.db, userId),
        calls: [workflowId],
        context: {
          run: { id: `test_${ulid()}`, created_at: new Date(startedAt).toISOString() },
          workflow: { id: workflowId, version: graph.version },
        },
      },
    );
  } catch (err) {
    failure = err instanceof RunFailure ? err : new RunFailure('internal_error', 'The node test failed.', nodeId);
  }
  const step = log.steps.get(nodeId);
  const result: NodeTestResult = {
    node_id: nodeId,
    node_type: node.type,
    status: step?.status ?? (failure ? 'failed' : 'skipped'),
    output: step?.output ?? null,
    ...(step?.output_value !== undefined ? { output_value: step.output_value } : {}),
    error: step?.error ?? (failure ? failure.toJSON() : null),
    usage: step?.usage ?? { ...NO_USAGE },
    cost: log.spent.cost ? costToWire(log.spent.cost) : null,
    duration: (ctx.now() - startedAt) / 1000,
    logs: [...log.steps.values()],
  };
  ctx.logger.info(
    { userId, workflowId, nodeId, status: result.status, usage: result.usage, duration: result.duration },
    'node tested (not a run)',
  );
  return result;
}
