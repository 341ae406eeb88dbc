// The workflow page's schedules: read-only; they are made and changed through
// the API (createSchedule ...), which the section says.
import type { Schedule } from '../../schedules/service.ts';
import { html, type Html } from '../../html/html.ts';

const when = (iso: string | null): string => (iso === null ? '—' : `${iso.slice(0, 16).replace('T', ' ')} UTC`);

function lastTick(workflowId: string, s: Schedule): Html | string {
  if (s.last_run_id) return html`<a href="/workflows/${workflowId}/runs/${s.last_run_id}">${when(s.last_run_at)}</a>`;
  if (s.last_error) return html`${when(s.last_run_at)}<br><small>No run: ${s.last_error}</small>`;
  return 'never';
}

export function schedulesSection(workflowId: string, schedules: Schedule[]): Html {
  const rows = schedules.map(
    (s) => html`<tr><td><code>${s.cron}</code><br><small>${s.timezone}</small></td>
<td>${s.version === null ? 'current' : `version ${s.version}`}</td>
<td>${s.enabled ? when(s.next_run_at) : 'disabled'}</td><td>${lastTick(workflowId, s)}</td></tr>`,
  );
  return html`<section aria-labelledby="schedules-heading"><h2 id="schedules-heading">Schedules</h2>
${
  schedules.length
    ? html`<table class="schedules"><thead><tr><th>Cron</th><th>Runs</th><th>Next run</th><th>Last run</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>No schedules.</p>`
}
<p><small>Schedules are made and changed through the API: <code>createSchedule</code> and its neighbours in the <a href="/docs">API reference</a>.</small></p></section>`;
}
