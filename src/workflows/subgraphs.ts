// The save-time rules of the nodes that make lists and run graphs of their own:
// `split`'s options, `map`'s one list and its body (a graph checked by the same rules as
// a workflow's, its problems pointing into it), and which workflows a graph calls (references.ts
// checks those against the store).
import { escapePointer } from '../shared/jsonPointer.ts';
import type { ProblemItem } from '../shared/errors.ts';

type Report = (pointer: string, message: string) => void;
/** graph.ts's validateWorkflowGraph (handed in: this module sits below it), and the limits it takes. */
type Validate = (nodes: unknown, edges: unknown, limits: BodyLimits) => ProblemItem[];
interface BodyLimits {
  maxNodes?: number;
  depth?: number;
  /** Items a run's maps may take together (RUN_MAX_ITEMS): nested maps' max_items multiplied may not pass it. */
  maxItems?: number;
  /** Inside a map body: the max_items of the maps around it, multiplied, and the items those maps may take together. */
  itemsAbove?: { each: number; total: number };
}

/** A map's max_items when it gives none (nodes/map.ts). */
const MAP_DEFAULT_MAX_ITEMS = 100;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The most nodes of a map's body (each runs once per item: 1000 items of 50 nodes is 50,000 steps). */
export const BODY_MAX_NODES = 50;
/** A map's body may hold a map whose body may not: deeper work calls a workflow (guarded at run time). */
export const BODY_MAX_DEPTH = 2;

/** `first`: each node id's index (its first node); `validate` checks a map's body as a graph of its own. */
export function checkSubgraphNodes<L extends BodyLimits>(
  nodes: unknown[],
  first: ReadonlyMap<string, number>,
  usable: { from: string; to: string }[],
  limits: L,
  validate: (nodes: unknown, edges: unknown, limits: L) => ProblemItem[],
  report: Report,
): void {
  nodes.forEach((node, i) => {
    if (!isObject(node) || !isObject(node.config) || typeof node.id !== 'string' || first.get(node.id) !== i) return;
    if (node.type === 'split') checkSplit(node.config, `/nodes/${i}/config`, report);
    if (node.type === 'map')
      checkMap(node.id, node.config, `/nodes/${i}`, usable, limits, validate as Validate, report);
  });
}

function checkSplit(config: Record<string, unknown>, at: string, report: Report): void {
  if (config.by !== 'separator' && config.separator !== undefined)
    report(`${at}/separator`, 'is used only with "by": "separator"');
  for (const key of ['size', 'overlap']) {
    if (config.by === 'separator' && config[key] !== undefined)
      report(`${at}/${key}`, 'is used only with "by": "characters" or "tokens"');
  }
  const size = typeof config.size === 'number' ? config.size : 1000;
  if (config.by !== 'separator' && typeof config.overlap === 'number' && config.overlap >= size)
    report(`${at}/overlap`, `must be less than size (${size})`);
}

function checkMap(
  id: string,
  config: Record<string, unknown>,
  at: string,
  usable: { from: string; to: string }[],
  limits: BodyLimits,
  validate: Validate,
  report: Report,
): void {
  const into = usable.filter((e) => e.to === id).length;
  if (into !== 1)
    report(
      at,
      `map "${id}" needs exactly one edge into it (the list it works through, e.g. from a split node); it has ${into}`,
    );
  const hasBody = config.body !== undefined;
  if (hasBody === (config.workflow_id !== undefined)) {
    report(
      `${at}/config`,
      hasBody ? 'give body or workflow_id, not both' : 'needs body (the sub-graph run for each item) or workflow_id',
    );
  }
  if (config.workflow_version !== undefined && config.workflow_id === undefined)
    report(`${at}/config/workflow_version`, 'is used only with workflow_id');
  if (config.default != null && config.on_item_error !== 'default')
    report(`${at}/config/default`, 'is used only with "on_item_error": "default"');
  // This map runs in every item of the maps around it: its items are theirs multiplied, and a run
  // counts the items of every map it runs (compute/runCaps.ts), the ones around it included.
  const above = limits.itemsAbove ?? { each: 1, total: 0 };
  const each = above.each * (typeof config.max_items === 'number' ? config.max_items : MAP_DEFAULT_MAX_ITEMS);
  const items = { each, total: above.total + each };
  if (limits.maxItems !== undefined && items.total > limits.maxItems) {
    const nested =
      limits.itemsAbove === undefined
        ? ''
        : ` (its max_items in each of ${above.each} items of the maps around it, which take ${above.total})`;
    report(
      `${at}/config/max_items`,
      `map "${id}" may bring the run's maps to ${items.total} items${nested}: more than a run's maps may take together (${limits.maxItems}, RUN_MAX_ITEMS); lower max_items`,
    );
  }
  if (!isObject(config.body)) return; // its shape is the schema's problem
  const depth = (limits.depth ?? 0) + 1;
  if (depth > BODY_MAX_DEPTH) {
    report(
      `${at}/config/body`,
      `map bodies nest at most ${BODY_MAX_DEPTH} deep: call a workflow (workflow_id) from here instead`,
    );
    return;
  }
  const body = config.body;
  for (const p of validate(body.nodes, body.edges, { ...limits, maxNodes: BODY_MAX_NODES, depth, itemsAbove: items }))
    report(`${at}/config/body${p.pointer}`, p.message);
  const item = typeof config.item_variable === 'string' ? config.item_variable : 'item';
  if (Array.isArray(body.nodes)) checkBodyEnds(body.nodes, item, `${at}/config/body`, report);
}

/** A body reads the item (and its index) and gives a result: its inputs are those two, and it has a text_output. */
function checkBodyEnds(nodes: unknown[], item: string, at: string, report: Report): void {
  let outputs = 0;
  nodes.forEach((node, i) => {
    if (!isObject(node)) return;
    if (node.type === 'text_output') outputs += 1;
    const variable = isObject(node.config) ? node.config.variable : undefined;
    if (node.type === 'text_input' && typeof variable === 'string' && variable !== item && variable !== 'index') {
      report(
        `${at}/nodes/${i}/config/variable`,
        `a map body's inputs are "${item}" (the item) and "index" (its position from 0)`,
      );
    }
  });
  if (outputs === 0 && nodes.length > 0)
    report(`${at}/nodes`, "a map body needs a text_output: its value is the item's result");
}

/** A workflow a graph calls: from a `workflow` node, or a `map` node's `workflow_id`, at any depth of map bodies. */
export interface WorkflowReference {
  workflowId: string;
  /** The version it pins, if it does. */
  version?: number;
  pointer: string;
}

export function workflowReferences(nodes: unknown, at = ''): WorkflowReference[] {
  if (!Array.isArray(nodes)) return [];
  return nodes.flatMap((node, i): WorkflowReference[] => {
    if (!isObject(node) || !isObject(node.config)) return [];
    const here = `${at}/nodes/${i}/config`;
    const found: WorkflowReference[] = [];
    if ((node.type === 'workflow' || node.type === 'map') && typeof node.config.workflow_id === 'string') {
      const version = node.type === 'workflow' ? node.config.version : node.config.workflow_version;
      found.push({
        workflowId: node.config.workflow_id,
        ...(Number.isInteger(version) && { version: version as number }),
        pointer: `${here}/${escapePointer('workflow_id')}`,
      });
    }
    if (node.type === 'map' && isObject(node.config.body))
      found.push(...workflowReferences(node.config.body.nodes, `${here}/body`));
    return found;
  });
}
