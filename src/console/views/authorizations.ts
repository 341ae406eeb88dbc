import type { AuthorizedApp } from '../../oauth/authorizations.ts';
import { splitScope } from '../../oauth/scopes.ts';
import { html, type Html } from '../../html/html.ts';
import { formatDate } from '../format.ts';
import type { PageUser } from './format.ts';
import { layout } from '../../html/layout.ts';

export interface AuthorizationsModel {
  user: PageUser;
  apps: AuthorizedApp[];
  flash?: string | undefined;
}

export function authorizationsPage({ user, apps, flash }: AuthorizationsModel): Html {
  const rows = apps.map(
    (
      a,
      i,
    ) => html`<tr><td><strong>${a.name}</strong>${a.registrationKind === 'console' ? '' : html` <span class="badge" title="This application registered itself; nobody reviewed it.">self-registered</span>`}<br><small>${a.homepage}</small><br><small>Client ID: <code>${a.clientId}</code></small></td><td>${splitScope(a.scope).map((s) => html`<code>${s}</code> `)}</td><td>${formatDate(a.authorizedAt)}</td>
<td><a class="button danger" href="/settings/authorizations/${a.applicationId}/revoke"${i === 0 ? html` id="first-revoke"` : ''}>Revoke</a></td></tr>`,
  );
  // The skip link leads to the first app's Revoke (without any app, to the page's text).
  return layout(
    {
      title: 'Authorized applications',
      user,
      current: '/settings/authorizations',
      flash,
      mainAction: apps.length ? { id: 'first-revoke', label: 'the authorized applications' } : undefined,
    },
    html`<h1>Authorized applications</h1>${apps.length ? html`<table><thead><tr><th>Application</th><th>Scopes</th><th>Authorized</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>You have not authorized any application.</p>`}`,
  );
}
