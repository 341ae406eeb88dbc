// The `map` node: its body (or a workflow of the user's) run once per item of a
// list, at most `concurrency` at once, results in the items' order. Each item is a sub-graph run
// of this run (subgraph.ts): its steps are `<map>[<i>].<node>`, its nodes spend the run's budgets,
// and a cancel or the run's time limit stops every item.
import type { components } from '../../../generated/api.d.ts';
import { RunFailure } from '../../shared/errors.ts';
import {
  assertCalleeInputs,
  innerFailure,
  inputVariables,
  outputIds,
  resultOf,
  typedInputs,
  type Graph,
  type SubgraphDeps,
} from './subgraph.ts';

type MapNode = components['schemas']['MapNode'];

const DEFAULTS = { concurrency: 4, maxItems: 100 };

/** The list a map works through: a list value, or a text holding a JSON list (a node that gives text). */
export function listOf(value: unknown, nodeId: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: said below
    }
  }
  const shown =
    typeof value === 'string'
      ? `text "${value.slice(0, 40)}${value.length > 40 ? '…' : ''}"`
      : JSON.stringify(value)?.slice(0, 40);
  throw new RunFailure(
    'invalid_items',
    `map "${nodeId}" needs a list (from a split node, or a JSON list); its input is ${shown}.`,
  );
}

/** Progress events of a map at most this many times (and once before its first item): its items' steps send none. */
const PROGRESS_EVENTS = 10;

/** Tells of the map's progress at its start and every tenth of its items settled (the last one included). */
function progressOf(deps: SubgraphDeps, node: MapNode, total: number): (settled: 'done' | 'failed') => void {
  const counts = { total, done: 0, failed: 0 };
  const every = Math.max(1, Math.ceil(total / PROGRESS_EVENTS));
  deps.progress?.(node, { ...counts });
  return (settled) => {
    counts[settled] += 1;
    const n = counts.done + counts.failed;
    if (n % every === 0 || n === total) deps.progress?.(node, { ...counts });
  };
}

export async function runMap(deps: SubgraphDeps, node: MapNode, input: unknown): Promise<unknown[]> {
  const { config } = node;
  const items = listOf(input, node.id);
  const maxItems = config.max_items ?? DEFAULTS.maxItems;
  if (items.length > maxItems) {
    throw new RunFailure(
      'too_many_items',
      `The list has ${items.length} items, more than max_items (${maxItems}); no item ran.`,
    );
  }
  deps.caps?.mapItems(items.length, node.id);
  const graph: Graph = config.body ?? (await deps.loadWorkflow(config.workflow_id!, config.workflow_version));
  if (!config.body) assertCalleeInputs(node, graph);
  const outputs = outputIds(graph);
  const itemVariable = config.item_variable ?? 'item';
  const readsIndex = inputVariables(graph).includes('index');
  const policy = config.on_item_error ?? 'fail';

  // The first failure that stops the map stops the items still running (and those not started).
  const stop = new AbortController();
  const signal = AbortSignal.any([deps.signal, stop.signal]);
  let failure: unknown;
  const results: unknown[] = new Array<unknown>(items.length);
  const skipped = new Set<number>();
  const tell = progressOf(deps, node, items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) {
      const i = next++;
      const prefix = `${node.id}[${i}].`;
      try {
        const inputs = typedInputs(graph, { [itemVariable]: items[i], ...(readsIndex ? { index: i } : {}) });
        results[i] = resultOf(await deps.runGraph(graph, inputs, prefix, signal, config.workflow_id), outputs);
        tell('done');
      } catch (err) {
        tell('failed');
        const stopsAll =
          policy === 'fail' ||
          signal.aborted ||
          (err instanceof RunFailure && (err.code === 'cancelled' || err.code === 'timeout'));
        if (stopsAll) {
          failure ??= innerFailure(err, `Item ${i}`, prefix);
          stop.abort(failure);
          return;
        }
        if (policy === 'skip') skipped.add(i);
        else results[i] = config.default ?? null;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(config.concurrency ?? DEFAULTS.concurrency, items.length) }, worker));
  if (deps.signal.aborted) throw deps.signal.reason;
  if (failure !== undefined) throw failure;
  return results.filter((_, i) => !skipped.has(i));
}
