// Server-rendered pages: tiny, escaped, and compatible with a strict CSP (no inline script or
// style; the stylesheet is src/console/assets/app.css, the scripts are built from
// src/console/browser/). Views are pure functions `(model) => Html` (src/console/views/).

/**
 * A fragment of HTML that is already safe to emit. Trusted by its class: only `html` and `raw`
 * make one, so no value parsed from a request (a plain object) can pass for markup.
 */
export class Html {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  toString(): string {
    return this.#text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export function raw(html: string): Html {
  return new Html(html);
}

/** Tagged template: interpolated values are escaped unless they are `Html` (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (value instanceof Html) return value.toString();
  return escapeHtml(value);
}
