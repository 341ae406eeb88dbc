// Server-rendered pages: tiny, escaped, and compatible with a strict CSP (no inline script or
// style; the one stylesheet is /assets/app.css). Views are pure functions `(model) => Html`
// (src/platform/views/).

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

export const STYLESHEET = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f8fa}
header{display:flex;gap:1rem;align-items:center;justify-content:space-between;padding:.6rem 1.2rem;background:#24292f;color:#fff}
header a{color:#fff;margin-right:1rem}
main{max-width:42rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
label{display:block;margin:.6rem 0 .2rem}
input[type=text],input[type=password],input[type=url],select,textarea{width:100%;box-sizing:border-box;padding:.4rem}
button{padding:.4rem .9rem;margin:.3rem .3rem .3rem 0;cursor:pointer}
.inline{display:inline}
fieldset{margin:.6rem 0;border:1px solid #d0d7de}fieldset label{display:inline;margin-right:1rem}
.error{color:#b00020;background:#fde7ea;padding:.5rem;border-radius:4px}
.notice{background:#fff8c5;padding:.5rem;border-radius:4px}
code{background:#eff1f3;padding:.1rem .3rem;border-radius:3px;word-break:break-all}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #d0d7de;padding:.4rem;text-align:left}
`;
