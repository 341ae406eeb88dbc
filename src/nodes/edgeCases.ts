// What an edge's `case` must name: out of a type that picks among named cases (its definition's
// `edgeCases`: a switch), one of them or `default`, and it needs one; out of a type that may go on
// past its failure, `error` (errorRoutes.ts); out of any other, nothing.
import type { ProblemItem } from '../shared/errors.ts';
import { ERROR_CASE, errorCaseProblem } from './errorRoutes.ts';

/**
 * Why an edge's `case` is wrong, with its pointer inside the edge ('' for the edge itself), or null.
 * `cases`: the names its source picks among (its type's `edgeCases`), undefined when its type picks
 * none; `continues`: its source goes on past its failure; `routable`: its source's type may
 * (errorRoutes.ts).
 */
export function caseProblem(
  edgeCase: unknown,
  fromType: string | undefined,
  cases: string[] | undefined,
  from: string,
  continues = false,
  routable = false,
): ProblemItem | null {
  if (edgeCase !== undefined && (typeof edgeCase !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(edgeCase))) {
    return { pointer: '/case', message: 'must be a case name (1 to 64 letters, digits, "_" or "-")' };
  }
  if (cases !== undefined) {
    if (edgeCase === undefined)
      return {
        pointer: '',
        message: `an edge out of ${fromType} "${from}" needs "case": one of its case names or "default"`,
      };
    if (typeof edgeCase === 'string' && edgeCase !== 'default' && !cases.includes(edgeCase)) {
      return {
        pointer: '/case',
        message: `${fromType} "${from}" has no case "${edgeCase}"; its cases: ${[...cases, 'default'].join(', ')}`,
      };
    }
    return null;
  }
  if (edgeCase === ERROR_CASE && fromType !== undefined) return errorCaseProblem(fromType, from, continues, routable);
  if (edgeCase !== undefined && fromType !== undefined)
    return {
      pointer: '/case',
      message: `only an edge out of a switch node carries a case ("${from}" is a ${fromType})`,
    };
  return null;
}
