// A switch node's choice (openapi.yaml SwitchNode), in a compute process (functions.ts): the
// compared value is a Liquid expression evaluated over the run's scope, and a `matches` pattern
// runs here, where the pool's time limit ends one that backtracks without end.
import { evaluateExpression, type TemplateScope } from '../../workflows/templates.ts';
import { canonicalJson } from '../values.ts';

export interface SwitchCase {
  name: string;
  operator: string;
  value?: unknown;
}

export interface SwitchInput {
  /** The Liquid expression of the compared value; absent: `upstream`. */
  expression?: string;
  scope: TemplateScope;
  upstream: unknown;
  cases: SwitchCase[];
}

export const isEmpty = (v: unknown): boolean =>
  v === null ||
  v === undefined ||
  (typeof v === 'string' && v.trim() === '') ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && Object.keys(v).length === 0);

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** -1, 0, 1 for two numbers or two strings (by code point); undefined for anything else. */
function order(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return Math.sign(a - b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

function contains(a: unknown, b: unknown): boolean {
  if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
  if (Array.isArray(a)) return a.some((item) => same(item, b));
  if (typeof a === 'object' && a !== null) return typeof b === 'string' && Object.hasOwn(a, b);
  return false;
}

/** Whether `value` meets one case (typed: values of other types never match an ordering). */
export function holds(value: unknown, { operator, value: right }: SwitchCase): boolean {
  const ordered = order(value, right);
  switch (operator) {
    case '==':
      return same(value, right);
    case '!=':
      return !same(value, right);
    case '<':
      return ordered !== undefined && ordered < 0;
    case '<=':
      return ordered !== undefined && ordered <= 0;
    case '>':
      return ordered !== undefined && ordered > 0;
    case '>=':
      return ordered !== undefined && ordered >= 0;
    case 'contains':
      return contains(value, right);
    case 'matches':
      return typeof value === 'string' && typeof right === 'string' && new RegExp(right, 'u').test(value);
    case 'empty':
      return isEmpty(value);
    case 'not_empty':
      return !isEmpty(value);
    case 'in':
      return Array.isArray(right) && right.some((item) => same(item, value));
    default:
      return false;
  }
}

/** The name of the first case that holds, or `default`; and the value compared, for the log. */
export async function switchCase({
  expression,
  scope,
  upstream,
  cases,
}: SwitchInput): Promise<{ chosen: string; compared: unknown }> {
  const compared = expression === undefined ? upstream : await evaluateExpression(expression, scope);
  const chosen = cases.find((c) => holds(compared, c))?.name ?? 'default';
  return { chosen, compared: compared === undefined ? null : compared };
}
