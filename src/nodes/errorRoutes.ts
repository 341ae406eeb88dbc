// The rules of error routing (openapi.yaml LlmCallNode.on_error), beyond what the schema checks: a
// node whose type may go on past its failure (its definition's `routable`: llm_call,
// http_request) and says `on_error: continue` may send its error down edges marked `case:
// "error"`, or give `config.default` as its output; neither means anything on a node whose failure
// fails the run, so there they are a 422.
import type { ProblemItem } from '../shared/errors.ts';

/** The `case` of an edge that carries its source's error. */
export const ERROR_CASE = 'error';

/** Whether a node of a routable type (or not: `routable`) goes on past its failure, so that its error can be routed. */
export const continuesOnError = (routable: boolean, config: unknown): boolean =>
  routable &&
  typeof config === 'object' &&
  config !== null &&
  (config as Record<string, unknown>).on_error === 'continue';

/**
 * `default` (inside the config) is allowed only where the node goes on past its failure. A `null`
 * reads as absent: generated clients (openapi-generator python) send it for every field left unset.
 */
export function defaultProblem(routable: boolean, config: Record<string, unknown>): ProblemItem | null {
  if (!routable || config.default == null || continuesOnError(routable, config)) return null;
  return {
    pointer: '/default',
    message: 'is the output of a failed node that goes on: it needs "on_error": "continue"',
  };
}

/** Why an edge marked `case: "error"` cannot be followed out of its source (of type `fromType`, `routable` or not), or null when it can. */
export function errorCaseProblem(
  fromType: string,
  from: string,
  continues: boolean,
  routable: boolean,
): ProblemItem | null {
  if (!routable)
    return {
      pointer: '/case',
      message: `only an edge out of a switch node, or an "error" edge out of an llm_call or http_request, carries a case ("${from}" is a ${fromType})`,
    };
  if (continues) return null;
  return {
    pointer: '/case',
    message: `an "error" edge needs its source to go on past its failure: "${from}" needs "on_error": "continue"`,
  };
}
