// What a template field offers after `{{`, and what accepting an offer writes: text and caret
// positions in, text and caret out. No DOM here (unit-tested as it is).

/** Most offers listed at once: the rest are reached by typing more. */
const SHOWN = 12;

/** The path being typed at `caret`, inside a `{{` not closed before it: where it starts, and its text so far. */
export function templateQuery(text: string, caret: number): { start: number; partial: string } | null {
  const before = text.slice(0, caret);
  const open = before.lastIndexOf('{{');
  if (open < 0 || before.indexOf('}}', open) >= 0) return null;
  const inside = /^-?(\s*)([A-Za-z0-9_.\-[\]]*)$/.exec(before.slice(open + 2));
  if (!inside) return null; // past the path (a filter, an operator): nothing to offer
  return { start: caret - inside[2]!.length, partial: inside[2]! };
}

/** The path being typed at `caret` in an expression field (no braces): where it starts, and its text so far. */
export function expressionQuery(text: string, caret: number): { start: number; partial: string } | null {
  const partial = /[A-Za-z0-9_.\-[\]]*$/.exec(text.slice(0, caret))![0];
  const start = caret - partial.length;
  if (text.slice(0, start).includes('|')) return null; // past the path, among its filters
  return { start, partial };
}

/** `path` written over the partial of an expression field, the caret after it. */
export function acceptInExpression(
  text: string,
  start: number,
  caret: number,
  path: string,
): { text: string; caret: number } {
  return { text: text.slice(0, start) + path + text.slice(caret), caret: start + path.length };
}

/** The paths of `scope` that fit `partial`: those starting with it first, then those containing it. */
export function offers(scope: readonly string[], partial: string): string[] {
  const p = partial.toLowerCase();
  const starting = scope.filter((s) => s.toLowerCase().startsWith(p));
  const containing = p ? scope.filter((s) => !s.toLowerCase().startsWith(p) && s.toLowerCase().includes(p)) : [];
  return [...starting, ...containing].filter((s) => s !== partial).slice(0, SHOWN);
}

/**
 * `path` written over the partial from `start` to `caret`, with a space after `{{` and the `}}`
 * closing it unless the text already closes it there; the caret after the closing braces.
 */
export function acceptOffer(text: string, start: number, caret: number, path: string): { text: string; caret: number } {
  const head = text.slice(0, start);
  const spaced = head.endsWith('{{') || head.endsWith('{{-') ? `${head} ` : head;
  const tail = text.slice(caret);
  const closed = /^\s*-?}}/.exec(tail);
  if (closed) {
    const written = `${spaced}${path}${tail.startsWith(' ') ? '' : ' '}`;
    return { text: written + tail, caret: written.length + closed[0].length };
  }
  const written = `${spaced}${path} }}`;
  return { text: written + tail, caret: written.length };
}
