import type { Application, AppDetails } from '../apps.ts';
import { html, type Html } from '../html.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from './layout.ts';

export interface ApplicationsModel {
  user: PageUser;
  apps: Application[];
  /** Why the last registration was refused, with what the user typed. */
  problems: FormProblem[];
  input?: Required<AppDetails>;
  flash?: string | undefined;
}

export function applicationsPage({ user, apps, problems, input, flash }: ApplicationsModel): Html {
  const rows = apps.map(
    (a) => html`<tr><td><strong>${a.name}</strong><br><small>${a.description}</small></td><td><code data-copy="client ID">${a.client_id}</code><br><small>${a.redirect_uri}</small></td>
<td><form method="post" action="/settings/applications/${a.id}/rotate"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit">Rotate secret</button></form>
<a class="button danger" href="/settings/applications/${a.id}/delete">Delete</a></td></tr>`,
  );
  return layout(
    { title: 'Applications', user, current: '/settings/applications', flash },
    html`<h1>Your applications</h1>
${apps.length ? html`<table><thead><tr><th>Application</th><th>Client</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No applications yet.</p>`}
<h2>Register an application</h2>${formProblems(problems)}
<form method="post" action="/settings/applications"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="name">Name</label><input type="text" id="name" name="name"${invalidAttrs(problems, 'name')} value="${input?.name ?? ''}" required>${fieldError(problems, 'name')}
<label for="description">Description</label><textarea id="description" name="description"${invalidAttrs(problems, 'description')}>${input?.description ?? ''}</textarea>${fieldError(problems, 'description')}
<label for="homepage">Homepage</label><input type="url" id="homepage" name="homepage"${invalidAttrs(problems, 'homepage')} value="${input?.homepage ?? ''}" required>${fieldError(problems, 'homepage')}
<label for="redirect_uri">Callback URL (redirect_uri)</label><input type="url" id="redirect_uri" name="redirect_uri"${invalidAttrs(problems, 'redirect_uri')} value="${input?.redirectUri ?? ''}" required>${fieldError(problems, 'redirect_uri')}
<button type="submit" class="primary">Register application</button></form>`,
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
