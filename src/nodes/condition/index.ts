import type { ProblemItem } from '../../shared/errors.ts';
import { defineNode, keyTemplates } from '../types.ts';
import { TEXT } from '../valueSchemas.ts';

/** The operators that look at `left` alone (ConditionNode: `right` is refused with them, required with the others). */
const UNARY_OPERATORS: readonly string[] = ['empty', 'not_empty'];

/** `right` is required or refused by its operator (once the operator itself is sound). */
function rightProblems(config: Record<string, unknown>, faulted: ReadonlySet<string>): ProblemItem[] {
  if (faulted.has('/operator') || typeof config.operator !== 'string') return [];
  const unary = UNARY_OPERATORS.includes(config.operator);
  if (unary && config.right !== undefined)
    return [{ pointer: '/right', message: `is not used by the operator ${config.operator} (it looks at left alone)` }];
  if (!unary && config.right === undefined)
    return [{ pointer: '/right', message: `is required by the operator ${config.operator}` }];
  return [];
}

export const condition = defineNode({
  type: 'condition',
  schema: 'ConditionNode',
  label: 'condition',
  docs: 'its text is `true` or `false`; edges out of it carry `"branch": "true"` or `"false"`',
  output: () => TEXT,
  templates: keyTemplates('left', 'right'),
  configProblems: rightProblems,
  // `left` and `right` are read before `operator`: whether `right` belongs depends on it.
  readLast: ['operator'],
  branches: true,
});
