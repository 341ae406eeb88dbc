// A map's save-time rules past its schema: one list coming in, a body or a workflow (not both),
// options that go with the one it has, the items it may bring the run's maps to, and its body: a
// graph checked by the same rules as a workflow's (its problems pointing into it) that reads the
// item and its index and gives a result.
import type { ProblemItem } from '../../shared/errors.ts';
import type { CalledWorkflow, GraphContext, InnerGraph, InnerGraphLimits } from '../types.ts';

/** A map's max_items when it gives none. */
const MAP_DEFAULT_MAX_ITEMS = 100;
/** The most nodes of a map's body (each runs once per item: 1000 items of 50 nodes is 50,000 steps). */
export const BODY_MAX_NODES = 50;
/** A map's body may hold a map whose body may not: deeper work calls a workflow (guarded at run time). */
export const BODY_MAX_DEPTH = 2;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The workflow it runs per item, when it names one (`workflow_id`, pinned by `workflow_version`). */
export const calledWorkflow = (config: Record<string, unknown>): CalledWorkflow | undefined =>
  typeof config.workflow_id === 'string'
    ? {
        workflowId: config.workflow_id,
        ...(Number.isInteger(config.workflow_version) && { version: config.workflow_version as number }),
        pointer: '/workflow_id',
        // The item goes to its item_variable input, its position to `index` when the callee reads it.
        inputs: {
          named: [
            typeof config.item_variable === 'string'
              ? { variable: config.item_variable, pointer: '/item_variable' }
              : { variable: 'item', pointer: '/workflow_id' },
          ],
          optional: ['index'],
          pointer: '/workflow_id',
        },
      }
    : undefined;

/** Its body, when it has one. */
export const bodyGraphs = (config: Record<string, unknown>): InnerGraph[] =>
  isObject(config.body) ? [{ nodes: config.body.nodes, edges: config.body.edges, pointer: '/body' }] : [];

export function mapProblems(
  { id, config }: { id: string; config: Record<string, unknown> },
  graph: GraphContext,
): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const report = (pointer: string, message: string) => problems.push({ pointer, message });
  if (graph.edgesIn !== 1)
    report(
      '',
      `map "${id}" needs exactly one edge into it (the list it works through, e.g. from a split node); it has ${graph.edgesIn}`,
    );
  const hasBody = config.body !== undefined;
  if (hasBody === (config.workflow_id !== undefined)) {
    report(
      '/config',
      hasBody ? 'give body or workflow_id, not both' : 'needs body (the sub-graph run for each item) or workflow_id',
    );
  }
  if (config.workflow_version !== undefined && config.workflow_id === undefined)
    report('/config/workflow_version', 'is used only with workflow_id');
  if (config.default != null && config.on_item_error !== 'default')
    report('/config/default', 'is used only with "on_item_error": "default"');
  const items = itemsProblem(id, config, graph.limits, report);
  if (isObject(config.body))
    bodyProblems(config.body, config, { ...graph, limits: { ...graph.limits, itemsAbove: items } }, report);
  return problems;
}

/**
 * This map runs in every item of the maps around it: its items are theirs multiplied, and a run
 * counts the items of every map it runs (compute/runCaps.ts), the ones around it included.
 */
function itemsProblem(
  id: string,
  config: Record<string, unknown>,
  limits: InnerGraphLimits,
  report: (pointer: string, message: string) => void,
): { each: number; total: number } {
  const above = limits.itemsAbove ?? { each: 1, total: 0 };
  const each = above.each * (typeof config.max_items === 'number' ? config.max_items : MAP_DEFAULT_MAX_ITEMS);
  const items = { each, total: above.total + each };
  if (limits.maxItems !== undefined && items.total > limits.maxItems) {
    const nested =
      limits.itemsAbove === undefined
        ? ''
        : ` (its max_items in each of ${above.each} items of the maps around it, which take ${above.total})`;
    report(
      '/config/max_items',
      `map "${id}" may bring the run's maps to ${items.total} items${nested}: more than a run's maps may take together (${limits.maxItems}, RUN_MAX_ITEMS); lower max_items`,
    );
  }
  return items;
}

/** Its body, as a graph (one level deeper, its items those of this map): `graph.limits.itemsAbove` is this map's. */
function bodyProblems(
  body: Record<string, unknown>,
  config: Record<string, unknown>,
  graph: GraphContext,
  report: (pointer: string, message: string) => void,
): void {
  const depth = (graph.limits.depth ?? 0) + 1;
  if (depth > BODY_MAX_DEPTH) {
    report(
      '/config/body',
      `map bodies nest at most ${BODY_MAX_DEPTH} deep: call a workflow (workflow_id) from here instead`,
    );
    return;
  }
  for (const p of graph.validate(body.nodes, body.edges, { ...graph.limits, maxNodes: BODY_MAX_NODES, depth }))
    report(`/config/body${p.pointer}`, p.message);
  const item = typeof config.item_variable === 'string' ? config.item_variable : 'item';
  if (Array.isArray(body.nodes)) bodyEnds(body.nodes, item, graph, report);
}

/** A body reads the item (and its index) and gives a result: its inputs are those two, and it has a text_output. */
function bodyEnds(
  nodes: unknown[],
  item: string,
  graph: GraphContext,
  report: (pointer: string, message: string) => void,
): void {
  let outputs = 0;
  nodes.forEach((node, i) => {
    if (!isObject(node)) return;
    if (graph.givesResult(node)) outputs += 1;
    const variable = graph.runInputOf(node)?.variable;
    if (variable !== undefined && variable !== item && variable !== 'index') {
      report(
        `/config/body/nodes/${i}/config/variable`,
        `a map body's inputs are "${item}" (the item) and "index" (its position from 0)`,
      );
    }
  });
  if (outputs === 0 && nodes.length > 0)
    report('/config/body/nodes', "a map body needs a text_output: its value is the item's result");
}
