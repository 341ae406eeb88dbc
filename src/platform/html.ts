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
// A run that has not ended (src/platform/views/runs.ts): its page follows the run's event stream
// (data-events, an EventSource on the same origin, signed in by the session cookie), updating each
// node's row and box as its events arrive, and reads the state part once at the end (data-live:
// the same markup alone, with the run's totals and output). Without EventSource, or when the stream
// fails, it reads the state part once a second until the X-Run-Status header says the run ended.
const live = document.querySelector('[data-live]');
if (live) {
  const ENDED = ['completed', 'failed', 'cancelled'];
  const words = (status) => status.replace('_', ' ');
  const el = (tag, className, text) => {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const badge = (status) => el('span', 'badge status-' + status, words(status));
  // As src/platform/views (formatDate, formatDuration).
  const date = (iso) => new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
  const duration = (s) => s < 10 ? s.toFixed(2) + ' s' : s < 60 ? Math.round(s) + ' s' : Math.floor(Math.round(s) / 60) + ' min ' + String(Math.round(s) % 60).padStart(2, '0') + ' s';
  const rowOf = (id) => live.querySelector('tr.step[data-node="' + CSS.escape(id) + '"]');
  const boxOf = (id) => live.querySelector('.graph g.node[data-node="' + CSS.escape(id) + '"]');
  const startedAt = new Map();

  const setNodeStatus = (id, status) => {
    const row = rowOf(id);
    if (row) {
      row.className = 'step status-' + status;
      row.cells[1].replaceChildren(badge(status));
    }
    const box = boxOf(id);
    if (box) {
      box.setAttribute('class', box.getAttribute('class').replace(/ status-\\S+/, '') + ' status-' + status);
      const type = box.querySelector('text.node-type');
      if (type) type.textContent = type.textContent.split(' · ')[0] + ' · ' + words(status);
      const title = box.querySelector('title');
      if (title) title.textContent = title.textContent.replace(/: [a-z ]+$/, '') + ': ' + words(status);
    }
  };
  const setTime = (row, from, to) => {
    if (!from) return row.cells[2].replaceChildren(el('small', '', '—'));
    const seconds = to ? (Date.parse(to) - Date.parse(from)) / 1000 : null;
    row.cells[2].replaceChildren(el('small', '', date(from)), el('br'), seconds === null ? '—' : duration(seconds));
  };
  const setUsage = (row, usage) => {
    if (!usage) return row.cells[3].replaceChildren(el('small', '', '—'));
    row.cells[3].replaceChildren(String(usage.total_tokens), el('span', 'cell-label', ' tokens'), el('br'), el('small', '', usage.prompt_tokens + ' in, ' + usage.completion_tokens + ' out'));
  };
  const outputText = (value) => el('pre', '', typeof value === 'string' ? value : JSON.stringify(value, null, 2));

  const handlers = {
    'run.status': (data) => document.querySelector('#run-status')?.replaceChildren(badge(data.status)),
    'node.started': (data) => {
      startedAt.set(data.node_id, data.started_at);
      setNodeStatus(data.node_id, 'running');
      const row = rowOf(data.node_id);
      if (!row) return;
      setTime(row, data.started_at, null);
      row.cells[4].replaceChildren(el('small', '', 'Working…'));
    },
    'node.delta': (data) => {
      const cell = rowOf(data.node_id)?.cells[4];
      if (!cell) return;
      let pre = cell.querySelector('pre');
      if (!pre) cell.replaceChildren((pre = el('pre', '', '')));
      pre.append(data.text);
    },
    'node.finished': (data) => {
      setNodeStatus(data.node_id, data.status);
      const row = rowOf(data.node_id);
      if (!row) return;
      setTime(row, startedAt.get(data.node_id), data.finished_at);
      setUsage(row, data.usage);
      const cell = row.cells[4];
      if (data.error) {
        const problem = el('div', 'error');
        const line = el('p');
        line.append(el('strong', '', data.error.code), ': ' + data.error.message);
        problem.append(line);
        cell.replaceChildren(problem, ...(data.output ? [outputText(data.output)] : []));
      } else if (data.status === 'skipped') cell.replaceChildren(el('small', '', 'Skipped: on a branch not taken.'));
      else if (data.status === 'not_started') cell.replaceChildren(el('small', '', 'Not started: the run ended first.'));
      else if (data.output !== null && data.output !== undefined) cell.replaceChildren(outputText(data.output));
      else cell.replaceChildren(el('small', '', '—'));
    },
  };

  const ended = (status) => {
    live.removeAttribute('data-live');
    document.getElementById('live-note')?.remove();
    const announce = document.getElementById('run-announce');
    if (announce) announce.textContent = 'The run ' + status + '.';
  };
  /** Reads the state part once; answers the run's status, or undefined (signed out, gone, unreachable). */
  const readState = async () => {
    const res = await fetch(live.dataset.live, { headers: { Accept: 'text/html' }, cache: 'no-store', redirect: 'error' });
    const status = res.headers.get('X-Run-Status');
    if (!res.ok || !status) return undefined; // signed out or gone: the page as it stands, a reload says why
    live.innerHTML = await res.text();
    if (ENDED.includes(status)) ended(status);
    return status;
  };
  const poll = () => {
    let failures = 0;
    const follow = async () => {
      let status;
      try {
        status = await readState();
        if (status === undefined) return;
        failures = 0;
      } catch {
        failures += 1; // the service restarting, say; after a minute of that, a reload is the way
      }
      if (!ENDED.includes(status) && failures < 60) setTimeout(follow, 1000);
    };
    setTimeout(follow, 1000);
  };

  if (typeof EventSource === 'function' && live.dataset.events) {
    const stream = new EventSource(live.dataset.events);
    let errors = 0;
    for (const [type, handle] of Object.entries(handlers)) {
      stream.addEventListener(type, (event) => {
        errors = 0;
        handle(JSON.parse(event.data));
      });
    }
    stream.addEventListener('run.finished', (event) => {
      stream.close(); // the server ends the stream here; an EventSource would otherwise reconnect
      const run = JSON.parse(event.data);
      handlers['run.status'](run);
      // The run's totals, output and error as the page renders them.
      readState().then((status) => status === undefined && ended(run.status), () => ended(run.status));
    });
    // A refused stream (closed) or one that keeps failing to reconnect: the state part once a second.
    stream.addEventListener('error', () => {
      errors += 1;
      if (stream.readyState === EventSource.CLOSED || errors >= 3) {
        stream.close();
        poll();
      }
    });
  } else {
    poll();
  }
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
main:focus{outline:none}
.skip-link{position:absolute;left:-999rem;top:.5rem;z-index:1;background:#fff;color:var(--accent);padding:.4rem .8rem;border-radius:6px}.skip-link:focus{left:1rem}
.hint{margin:.1rem 0 .4rem;color:var(--muted);font-size:.9rem}.expired{color:var(--danger);font-size:.9rem}
.continue-to{margin:-.6rem 0 1rem;color:var(--muted)}
.visually-hidden{position:absolute;width:1px;height:1px;margin:0;padding:0;border:0;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
/* Workflows and runs */
.crumbs{margin:0 0 .25rem;font-size:.9rem}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;font-size:.8rem;font-weight:600;border:1px solid var(--border);background:#f6f8fa;color:#1f2328;white-space:nowrap}
.badge.status-completed{background:#dafbe1;border-color:#aceebb;color:#116329}.badge.status-failed{background:#ffebe9;border-color:#ffcecb;color:#82071e}
.badge.status-running{background:#ddf4ff;border-color:#b6e3ff;color:#0a3069}.badge.status-cancelled,.badge.status-skipped,.badge.status-not_started{color:var(--muted)}
.graph{overflow-x:auto;margin:.5rem 0 1rem;padding:.5rem;border:1px solid var(--border);border-radius:6px;background:#f6f8fa}
.graph svg{display:block;max-width:100%;height:auto;margin:0 auto;font:13px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.graph .node rect{fill:#fff;stroke:#8c959f}.graph .node .stripe{stroke:none;fill:#8c959f}
.graph .type-text_input .stripe{fill:#0969da}.graph .type-llm_call .stripe{fill:#8250df}.graph .type-template .stripe{fill:#bf8700}.graph .type-condition .stripe{fill:#bc4c00}.graph .type-text_output .stripe{fill:#1a7f37}
.graph .node-id{font-weight:600;fill:#1f2328}.graph .node-type{font-size:11px;fill:var(--muted)}
.graph .status-completed rect:first-of-type{stroke:#1a7f37;stroke-width:2}.graph .status-failed rect:first-of-type{stroke:var(--danger);stroke-width:2}
.graph .status-running rect:first-of-type{stroke:var(--accent);stroke-width:2;stroke-dasharray:5 3}.graph .status-skipped rect:first-of-type,.graph .status-not_started rect:first-of-type{stroke-dasharray:3 3;fill:#f6f8fa}
.graph .edge path{fill:none;stroke:#6e7781;stroke-width:1.5}.graph marker path{fill:#6e7781}
.graph .branch{font-size:12px;font-weight:600;paint-order:stroke;stroke:#f6f8fa;stroke-width:4px}.graph .branch-true{fill:#116329}.graph .branch-false{fill:#82071e}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid var(--border);border-radius:6px;padding:.5rem .75rem;margin:.25rem 0;font-size:.85rem;max-height:24rem;overflow:auto}
.facts{display:flex;flex-wrap:wrap;gap:.5rem 2rem;margin:1rem 0}.facts dt{font-size:.8rem;color:var(--muted)}.facts dd{margin:0}
.inputs dt{font-weight:600;margin-top:.5rem}.inputs dd{margin:0}
.pager{display:flex;gap:1rem;align-items:center;margin:1rem 0}
h2.first{margin-top:1rem;border-top:0;padding-top:0}
.cell-label{display:none}
td.step-output{min-width:12rem}
@media (max-width:40rem){
.cell-label{display:inline}td.step-output{min-width:0}.graph svg.wide{max-width:none}
}
@media (max-width:40rem){
main{margin:0;border:0;border-radius:0;padding:1rem}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
table,tbody,tr,td{display:block}tr{border-bottom:1px solid var(--border);padding:.5rem 0}td{border:0;padding:.15rem 0}
}
`;
