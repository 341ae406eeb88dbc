// Building and finding elements. The scripts find what the server rendered by its `data-`
// attributes (never by position or styling class), so a view may change its markup freely as long
// as it keeps the hooks.

type Props = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined;

/**
 * An element with attributes and children: `text` sets its text, `className` its class, `true` an
 * empty attribute; null, undefined and false leave the attribute out, and null children are skipped.
 */
export function make<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'className') e.className = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  e.append(...children.filter((c): c is Node | string => c !== null && c !== undefined));
  return e;
}

/** An SVG element (the picture's own namespace). */
export const makeSvg = <K extends keyof SVGElementTagNameMap>(tag: K): SVGElementTagNameMap[K] =>
  document.createElementNS('http://www.w3.org/2000/svg', tag);

/** A selector for an attribute holding a value, the value escaped. */
export const hook = (name: string, value: string): string => `[${name}="${CSS.escape(value)}"]`;
