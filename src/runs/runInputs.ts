// A run's inputs: typed per text_input, read from text (the console's form, a trigger's templates),
// and checked against a graph before anything starts.
import type { ProblemItem } from '../shared/errors.ts';
import { runInputOf } from '../nodes/registry.ts';
import type { Workflow } from '../workflows/service.ts';
import { isOfType } from './values.ts';

/** Inputs as JSON values: each text_input's value, of its declared type (text without one). */
export type RunInputs = Record<string, unknown>;

/** Deeper than this, an input is refused: it is stored, compared and logged by recursive code. */
const INPUT_MAX_DEPTH = 64;
const depthOf = (value: unknown, limit: number): number => {
  if (typeof value !== 'object' || value === null || limit <= 0) return 0;
  return 1 + Math.max(0, ...Object.values(value).map((v) => depthOf(v, limit - 1)));
};

/** The text_input variables of a graph, with the type each declares. */
const variablesOf = (nodes: Workflow['nodes']) =>
  new Map(nodes.flatMap((n) => runInputOf(n) ?? []).map((input) => [input.variable, input.type]));

/**
 * Inputs typed in as text (the console's form, a run's `inputs`): each is parsed as JSON where its
 * text_input declares a type other than string, and kept as text where it is not JSON (the
 * type check then names it).
 */
export function inputsFromText(nodes: Workflow['nodes'], texts: Record<string, string>): RunInputs {
  const types = variablesOf(nodes);
  return Object.fromEntries(
    Object.entries(texts).map(([name, text]) => {
      if ((types.get(name) ?? 'string') === 'string') return [name, text];
      try {
        return [name, JSON.parse(text) as unknown];
      } catch {
        return [name, text];
      }
    }),
  );
}

/** Missing, extra and mistyped inputs, as pointers into the request body. */
export function checkInputs(nodes: Workflow['nodes'], inputs: Record<string, unknown>): ProblemItem[] {
  const variables = variablesOf(nodes);
  const problems: ProblemItem[] = [];
  for (const [v, type] of variables) {
    if (!Object.hasOwn(inputs, v))
      problems.push({ pointer: `/body/inputs/${v}`, message: `is required (text_input variable "${v}")` });
    else if (!isOfType(inputs[v], type))
      problems.push({
        pointer: `/body/inputs/${v}`,
        message: `must be ${type === 'integer' || type === 'object' || type === 'array' ? 'an' : 'a'} ${type}`,
      });
    else if (depthOf(inputs[v], INPUT_MAX_DEPTH + 1) > INPUT_MAX_DEPTH)
      problems.push({ pointer: `/body/inputs/${v}`, message: `must be nested at most ${INPUT_MAX_DEPTH} levels deep` });
  }
  for (const name of Object.keys(inputs)) {
    if (!variables.has(name)) {
      problems.push({
        pointer: `/body/inputs/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: `is not a text_input variable of this workflow`,
      });
    }
  }
  return problems;
}
