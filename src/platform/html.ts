// Server-rendered pages: tiny, escaped, and compatible with a strict CSP (no inline script or
// style; the one stylesheet is /assets/app.css).

/** A fragment of HTML that is already safe to emit. */
export interface Html {
  readonly __html: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export function raw(html: string): Html {
  return { __html: html };
}

/** Tagged template: interpolated values are escaped unless they are `Html` (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return raw(out);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (typeof value === 'object' && '__html' in value) return (value as Html).__html;
  return escapeHtml(value);
}

export interface LayoutOptions {
  title: string;
  /** The logged-in user's login, shown in the header with a logout form. */
  user?: { login: string; csrf: string } | undefined;
}

export function layout(options: LayoutOptions, body: Html): string {
  const nav = options.user
    ? html`<nav><a href="/settings/applications">Applications</a> <a href="/settings/tokens">Access tokens</a> <a href="/settings/authorizations">Authorized apps</a>
<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf_token" value="${options.user.csrf}">
<span>${options.user.login}</span> <button type="submit">Log out</button></form></nav>`
    : html``;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title><link rel="stylesheet" href="/assets/app.css"></head>
<body><header><strong>OpenAuth</strong>${nav.__html}</header><main>${body.__html}</main></body></html>`;
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
