import type { AuthorizedApp } from '../../oauth/authorizations.ts';
import { splitScope } from '../../oauth/scopes.ts';
import { html, type Html } from '../html.ts';
import { formatDate, type PageUser } from './format.ts';
import { layout } from './layout.ts';

export interface AuthorizationsModel {
  user: PageUser;
  apps: AuthorizedApp[];
  flash?: string | undefined;
}

export function authorizationsPage({ user, apps, flash }: AuthorizationsModel): Html {
  const rows = apps.map(
    (a) => html`<tr><td><strong>${a.name}</strong><br><small>${a.homepage}</small></td><td>${splitScope(a.scope).map((s) => html`<code>${s}</code> `)}</td><td>${formatDate(a.authorizedAt)}</td>
<td><a class="button danger" href="/settings/authorizations/${a.applicationId}/revoke">Revoke</a></td></tr>`,
  );
  return layout(
    { title: 'Authorized applications', user, current: '/settings/authorizations', flash },
    html`<h1>Authorized applications</h1>${apps.length ? html`<table><thead><tr><th>Application</th><th>Scopes</th><th>Authorized</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>You have not authorized any application.</p>`}`,
  );
}
