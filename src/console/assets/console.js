// The console's progressive enhancement, served as /assets/console.js (the CSP allows script-src
// 'self', never inline): every page works without it. A Copy button after each <code data-copy>.
for (const code of document.querySelectorAll(
  'code[data-copy], code#client-id, code#client-secret, code#access-token',
)) {
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
// The node inspector (src/console/views/nodeInspector.ts): a graph box links to its node's
// details; on a run's page those are folded in the node's row, so opening the link unfolds them.
const openTarget = () => {
  const target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  const details = target?.querySelector('details.step-details');
  if (details) details.open = true;
  target?.focus({ preventScroll: true });
};
window.addEventListener('hashchange', openTarget);
openTarget();
// A run that has not ended (src/console/views/runs.ts): its page follows the run's event stream
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
  // As src/console/views (formatDate, formatDuration).
  const date = (iso) => new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
  const duration = (s) =>
    s < 10
      ? s.toFixed(2) + ' s'
      : s < 60
        ? Math.round(s) + ' s'
        : Math.floor(Math.round(s) / 60) + ' min ' + String(Math.round(s) % 60).padStart(2, '0') + ' s';
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
      box.setAttribute('class', box.getAttribute('class').replace(/ status-\S+/, '') + ' status-' + status);
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
    row.cells[3].replaceChildren(
      String(usage.total_tokens),
      el('span', 'cell-label', ' tokens'),
      el('br'),
      el('small', '', usage.prompt_tokens + ' in, ' + usage.completion_tokens + ' out'),
    );
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
    // A map's items send no events of their own: its row counts them.
    'node.progress': (data) => {
      const cell = rowOf(data.node_id)?.cells[4];
      if (!cell) return;
      cell.replaceChildren(
        el(
          'small',
          '',
          data.done + ' of ' + data.total + ' items done' + (data.failed ? ', ' + data.failed + ' failed' : '') + '…',
        ),
      );
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
      else if (data.status === 'not_started')
        cell.replaceChildren(el('small', '', 'Not started: the run ended first.'));
      else if (data.output !== null && data.output !== undefined) cell.replaceChildren(outputText(data.output));
      else cell.replaceChildren(el('small', '', '—'));
    },
  };

  const ended = (status) => {
    live.removeAttribute('data-live');
    document.getElementById('live-note')?.remove();
    document.getElementById('cancel-run')?.remove(); // nothing left to cancel (a reload offers Retry)
    const announce = document.getElementById('run-announce');
    if (announce) announce.textContent = 'The run ' + status + '.';
  };
  /** Reads the state part once; answers the run's status, or undefined (signed out, gone, unreachable). */
  const readState = async () => {
    const res = await fetch(live.dataset.live, {
      headers: { Accept: 'text/html' },
      cache: 'no-store',
      redirect: 'error',
    });
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
      readState().then(
        (status) => status === undefined && ended(run.status),
        () => ended(run.status),
      );
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
