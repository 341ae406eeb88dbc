import type { Application, AppDetails } from '../apps.ts';
import { html, type Html } from '../html.ts';
import type { PageUser } from './format.ts';
import { layout } from './layout.ts';

export interface ApplicationsModel {
  user: PageUser;
  apps: Application[];
  /** Why the last registration was refused, with what the user typed. */
  problems: string[];
  input?: Required<AppDetails>;
}

export function applicationsPage({ user, apps, problems, input }: ApplicationsModel): Html {
  const rows = apps.map(
    (a) => html`<tr><td><strong>${a.name}</strong><br><small>${a.description}</small></td><td><code>${a.client_id}</code><br><small>${a.redirect_uri}</small></td>
<td><form method="post" action="/settings/applications/${a.id}/rotate"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Rotate secret</button></form>
<form method="post" action="/settings/applications/${a.id}/delete"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Delete</button></form></td></tr>`,
  );
  return layout(
    { title: 'Applications', user },
    html`<h1>Your applications</h1>
${apps.length ? html`<table><tr><th>Application</th><th>Client</th><th></th></tr>${rows}</table>` : html`<p>No applications yet.</p>`}
<h2>Register an application</h2>${problems.map((p) => html`<p class="error">${p}</p>`)}
<form method="post" action="/settings/applications"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="name">Name</label><input type="text" id="name" name="name" value="${input?.name ?? ''}" required>
<label for="description">Description</label><textarea id="description" name="description">${input?.description ?? ''}</textarea>
<label for="homepage">Homepage</label><input type="url" id="homepage" name="homepage" value="${input?.homepage ?? ''}" required>
<label for="redirect_uri">Callback URL (redirect_uri)</label><input type="url" id="redirect_uri" name="redirect_uri" value="${input?.redirectUri ?? ''}" required>
<button type="submit">Register</button></form>`,
  );
}

export interface ClientSecretModel {
  user: PageUser;
  title: string;
  clientId: string;
  secret: string;
}

/** The one time a client secret is shown. */
export const clientSecretPage = ({ user, title, clientId, secret }: ClientSecretModel): Html =>
  layout(
    { title, user },
    html`<h1>${title}</h1><p class="notice">Copy the client secret now: it is shown only once.</p>
<p>client_id: <code id="client-id">${clientId}</code></p><p>client_secret: <code id="client-secret">${secret}</code></p>
<p><a href="/settings/applications">Back to applications</a></p>`,
  );
