// Which edges out of a node a run follows: a condition's by its verdict (`branch`), a switch's by
// its chosen case (`case`, chosen in the compute pool: compute/switchCase.ts).
import type { components } from '../../generated/api.d.ts';
import type { TemplateScope } from '../workflows/templates.ts';
import type { RunBudget } from './compute/budget.ts';
import { scopeFor } from './compute/scope.ts';
import { produced, type Produced } from './values.ts';
import type { RunFailure } from '../shared/errors.ts';
import { ERROR_CASE } from '../nodes/errorRoutes.ts';

type ConditionOperator = components['schemas']['ConditionNode']['config']['operator'];
type SwitchNode = components['schemas']['SwitchNode'];
type WorkflowEdge = components['schemas']['WorkflowEdge'];
/** A node that goes on past its failure (an llm_call or http_request, nodes/errorRoutes.ts): its id and its `default`. */
type ContinuingNode = { id: string; config: { default?: unknown } };

/** A condition's verdict on its rendered sides (exact, case-sensitive; `empty` ignores surrounding whitespace). */
export function compare(operator: ConditionOperator, left: string, right: string): boolean {
  switch (operator) {
    case 'equals':
      return left === right;
    case 'not_equals':
      return left !== right;
    case 'contains':
      return left.includes(right);
    case 'not_contains':
      return !left.includes(right);
    case 'starts_with':
      return left.startsWith(right);
    case 'ends_with':
      return left.endsWith(right);
    case 'empty':
      return left.trim() === '';
    case 'not_empty':
      return left.trim() !== '';
  }
}

/**
 * An edge is followed when its source ran and, out of a condition or a switch, names its verdict or
 * chosen case; out of a node that failed into its error edges, only those (`case: error`) are.
 */
export function followed(edge: WorkflowEdge, source: Produced): boolean {
  if (source.failed) return edge.case === ERROR_CASE;
  if (edge.branch !== undefined && edge.branch !== source.text) return false;
  return edge.case === undefined || edge.case === source.route;
}

/** A switch's chosen case (or `default`), over its `value` expression or its first upstream value. */
export async function chooseCase(
  budget: RunBudget,
  node: SwitchNode,
  scope: TemplateScope,
  before: Produced[],
  signal: AbortSignal,
): Promise<string> {
  const { value: expression, cases } = node.config;
  const input = {
    ...(expression !== undefined ? { expression } : {}),
    // Only what the expression reads crosses into the compute process.
    scope: expression !== undefined ? scopeFor(`{{ ${expression} }}`, scope) : { inputs: {}, nodes: {} },
    upstream: before[0]?.value ?? '',
    cases,
  };
  return (await budget.compute('switchCase', input, signal)).chosen;
}

/**
 * The output of a node that failed and goes on (`on_error: continue`): its error `{code, message}`
 * down its `case: error` edges when it has any, else its `config.default`, else (absent or null) an empty text.
 */
export function continuedOutput(
  node: ContinuingNode,
  edgesIn: ReadonlyMap<string, WorkflowEdge[]>,
  failure: RunFailure,
): Produced {
  const routed = [...edgesIn.values()].some((edges) => edges.some((e) => e.from === node.id && e.case === ERROR_CASE));
  if (routed) return { ...produced({ code: failure.code, message: failure.message }), failed: true };
  return produced(node.config.default ?? '');
}
