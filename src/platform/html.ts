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

/** Progressive enhancement (/assets/console.js, allowed by the CSP's script-src 'self'): a Copy button after each <code data-copy="what">. */
export const CONSOLE_SCRIPT = `
for (const code of document.querySelectorAll('code[data-copy], code#client-id, code#client-secret, code#access-token')) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy';
  button.textContent = 'Copy';
  button.setAttribute('aria-label', 'Copy ' + (code.dataset.copy ?? code.id.replace('-', ' ')));
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(code.textContent);
    button.textContent = 'Copied';
  });
  code.after(button);
}
`;

/** The one stylesheet: system fonts, one accent colour (blue), red only for what destroys. */
export const STYLESHEET = `
:root{--accent:#0969da;--danger:#cf222e;--border:#d0d7de;--muted:#59636e;color-scheme:light}
*,*::before,*::after{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
a{color:var(--accent)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.6rem 1.2rem;background:#24292f;color:#fff}
header nav{display:flex;flex-wrap:wrap;gap:.25rem .9rem;align-items:center}
header a{color:#fff;text-decoration:none;padding:.15rem 0;border-bottom:2px solid transparent}
header a:hover{border-bottom-color:#8c959f}
header a[aria-current=page]{font-weight:600;border-bottom-color:#fd8c73}
main{max-width:56rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid var(--border);border-radius:8px}
h1{font-size:1.5rem;margin-top:0}h2{font-size:1.2rem;margin-top:2rem;padding-top:1rem;border-top:1px solid var(--border)}
label{display:block;margin:.8rem 0 .25rem;font-weight:600}
input[type=text],input[type=password],input[type=url],select,textarea{width:100%;padding:.45rem .6rem;font:inherit;border:1px solid var(--border);border-radius:6px;background:#fff}
input:focus,select:focus,textarea:focus,button:focus-visible,a:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
[aria-invalid=true]{border-color:var(--danger)}
.field-error{color:var(--danger);margin:.25rem 0 0;font-size:.9rem}
button{font:inherit;font-size:.9rem;padding:.35rem .9rem;margin:.3rem .3rem .3rem 0;cursor:pointer;border:1px solid var(--border);border-radius:6px;background:#f6f8fa;color:#1f2328}
button:hover{background:#eef1f4}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff;font-weight:600}
button.primary:hover{background:#0757ba}
button.danger{color:var(--danger)}
button.danger:hover,button.danger.confirm{background:var(--danger);border-color:var(--danger);color:#fff}
a.button{display:inline-block;font-size:.9rem;padding:.35rem .9rem;margin:.3rem .3rem .3rem 0;border:1px solid var(--border);border-radius:6px;background:#f6f8fa;text-decoration:none}
a.button.danger{color:var(--danger)}a.button.danger:hover{background:var(--danger);border-color:var(--danger);color:#fff}
button.copy{font-size:.8rem;padding:.1rem .5rem;margin:0 0 0 .3rem}
button.link{background:none;border:0;color:#fff;text-decoration:underline;padding:0;margin:0}
.inline{display:inline}
fieldset{margin:.8rem 0;border:1px solid var(--border);border-radius:6px}fieldset label{display:inline-block;margin:.2rem 1rem .2rem 0;font-weight:400}
.error{color:#82071e;background:#ffebe9;border:1px solid #ffcecb;padding:.5rem .75rem;border-radius:6px}.error p{margin:.2rem 0}
.notice{background:#fff8c5;border:1px solid #eed888;padding:.5rem .75rem;border-radius:6px}
.success{background:#dafbe1;border:1px solid #aceebb;padding:.5rem .75rem;border-radius:6px}
code{background:#eff1f3;padding:.1rem .3rem;border-radius:4px;word-break:break-all;font-size:.9em}
small{color:var(--muted)}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid var(--border);padding:.5rem;text-align:left;vertical-align:top}
td form{display:inline}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
@media (max-width:40rem){
main{margin:0;border:0;border-radius:0;padding:1rem}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
table,tbody,tr,td{display:block}tr{border-bottom:1px solid var(--border);padding:.5rem 0}td{border:0;padding:.15rem 0}
}
`;
