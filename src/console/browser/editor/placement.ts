// Where the editor shows a problem the API names by JSON pointer. No DOM here (unit-tested).

/**
 * The pointer of the field a problem is shown at: the field whose pointer is the problem's, else
 * the nearest one enclosing it (`/nodes/3/config/headers/X-Key` at the headers' JSON box), or
 * null when no field holds it (a node's own problem: listed at the end of its form). `fields`:
 * the pointers of the form's fields, groups (a fieldset) left out.
 */
export function fieldFor(pointer: string, fields: readonly string[]): string | null {
  let best: string | null = null;
  for (const field of fields)
    if ((pointer === field || pointer.startsWith(`${field}/`)) && (best === null || field.length > best.length))
      best = field;
  return best;
}
