// What a switch node's config must say (openapi.yaml SwitchNode), beyond what its schema checks:
// case names unique and not `default`, a comparison value that the operator can use, a pattern
// that compiles. Its edges' `case` names are its `edgeCases` (../edgeCases.ts checks them).
import type { ProblemItem } from '../../shared/errors.ts';

const UNARY = ['empty', 'not_empty'];
const ORDERED = ['<', '<=', '>', '>='];
const PATTERN_MAX = 1000;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function caseValueProblem(operator: unknown, value: unknown, has: boolean): string | null {
  if (typeof operator !== 'string') return null; // the schema's to report
  if (UNARY.includes(operator)) return has ? `is not used by the operator ${operator}` : null;
  if (!has) return `is required by the operator ${operator}`;
  if (operator === 'in' && !Array.isArray(value)) return 'must be a list for the operator in';
  if (ORDERED.includes(operator) && typeof value !== 'number' && typeof value !== 'string')
    return `must be a number or a string for the operator ${operator}`;
  if (operator === 'matches') {
    if (typeof value !== 'string' || value.length > PATTERN_MAX)
      return `must be a regular expression of at most ${PATTERN_MAX} characters`;
    try {
      new RegExp(value, 'u'); // compiled only: it runs in the compute pool
    } catch (err) {
      return `is not a valid regular expression: ${(err as Error).message}`;
    }
  }
  return null;
}

/** The problems of a switch's config past its schema, as pointers inside the config. */
export function switchProblems(config: Record<string, unknown>): ProblemItem[] {
  if (!Array.isArray(config.cases)) return [];
  const problems: ProblemItem[] = [];
  const seen = new Map<string, number>();
  config.cases.forEach((c: unknown, i) => {
    if (!isObject(c)) return;
    if (typeof c.name === 'string') {
      if (c.name === 'default')
        problems.push({
          pointer: `/cases/${i}/name`,
          message: 'must not be "default" (the edge for no case holding is named so)',
        });
      const first = seen.get(c.name);
      if (first !== undefined)
        problems.push({
          pointer: `/cases/${i}/name`,
          message: `duplicate case name "${c.name}" (also /cases/${first})`,
        });
      else seen.set(c.name, i);
    }
    const problem = caseValueProblem(c.operator, c.value, Object.hasOwn(c, 'value'));
    if (problem) problems.push({ pointer: `/cases/${i}/value`, message: problem });
  });
  return problems;
}

/** The names its edges pick by `case`, besides `default`: its cases' names. */
export const caseNames = (config: Record<string, unknown>): string[] =>
  Array.isArray(config.cases)
    ? config.cases.flatMap((c: unknown) => (isObject(c) && typeof c.name === 'string' ? [c.name] : []))
    : [];
