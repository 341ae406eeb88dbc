// The workflow page's callbacks: each URL told of run ends and whether deliveries go out to it. A
// callback the service paused (its deliveries kept failing) says when and why, with a button for
// its owner to re-enable it (the API's enableCallback); they are made and deleted through the API.
import type { Callback } from '../../hooks/callbacks.ts';
import { html, type Html } from '../../html/html.ts';
import type { PageUser } from './format.ts';

const when = (iso: string): string => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

function state(user: PageUser, workflowId: string, c: Callback): Html {
  if (c.status !== 'paused') return html`active`;
  return html`<strong>paused</strong>${c.paused_at ? html` since ${when(c.paused_at)}` : ''}${c.disabled_reason ? html`<br><small>${c.disabled_reason}</small>` : ''}
<form method="post" action="/workflows/${workflowId}/callbacks/${c.id}/enable" class="enable-callback"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit" id="enable-${c.id}">Re-enable</button></form>`;
}

/** The section, only for a workflow with callbacks (most have none, and their page stays as it was). */
export function callbacksSection(user: PageUser, workflowId: string, callbacks: Callback[]): Html | string {
  if (!callbacks.length) return '';
  const rows = callbacks.map(
    (c) =>
      html`<tr><td><code>${c.url}</code>${c.description ? html`<br><small>${c.description}</small>` : ''}</td><td>${state(user, workflowId, c)}</td></tr>`,
  );
  return html`<section aria-labelledby="callbacks-heading"><h2 id="callbacks-heading">Callbacks</h2>
<table class="callbacks"><thead><tr><th>URL</th><th>Deliveries</th></tr></thead><tbody>${rows}</tbody></table>
<p><small>Callbacks are made and deleted through the API: <code>createCallback</code> and its neighbours in the <a href="/docs">API reference</a>. A paused one gets nothing until it is re-enabled; the run ends it missed are delivered then.</small></p></section>`;
}
