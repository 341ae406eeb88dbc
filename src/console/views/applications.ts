import type { Application, AppDetails, ClientSecret } from '../../accounts/apps.ts';
import { DEFAULT_ID_TOKEN_ALG, MAX_CLIENT_SECRETS } from '../../accounts/apps.ts';
import { ID_TOKEN_ALGS } from '../../accounts/validate.ts';
import { html, type Html } from '../../html/html.ts';
import { formatDate } from '../format.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from '../../html/layout.ts';

export interface ApplicationsModel {
  user: PageUser;
  apps: Application[];
  /** Why the last registration was refused, with what the user typed. */
  problems: FormProblem[];
  input?: Required<AppDetails>;
  /** The registration form's one-time nonce: the same form submitted twice registers one app. */
  nonce: string;
  flash?: string | undefined;
}

const selected = (value: string, chosen: string) => (value === chosen ? html` selected` : '');

/** Name, description, homepage, callback and ID token algorithm: the fields of registering and of editing an app. */
function detailFields(problems: FormProblem[], input: Required<AppDetails> | undefined): Html {
  const alg = input?.idTokenAlg || DEFAULT_ID_TOKEN_ALG;
  return html`<label for="name">Application name</label><input type="text" id="name" name="name"${invalidAttrs(problems, 'name')} value="${input?.name ?? ''}" required>${fieldError(problems, 'name')}
<label for="description">Description <small>(optional; users see it when they authorize the app)</small></label><textarea id="description" name="description"${invalidAttrs(problems, 'description')}>${input?.description ?? ''}</textarea>${fieldError(problems, 'description')}
<label for="homepage">Homepage URL</label><input type="url" id="homepage" name="homepage"${invalidAttrs(problems, 'homepage')} value="${input?.homepage ?? ''}" required>${fieldError(problems, 'homepage')}
<label for="redirect_uri">Authorization callback URL <small>(redirect_uri; https, or http on a loopback address)</small></label><input type="url" id="redirect_uri" name="redirect_uri"${invalidAttrs(problems, 'redirect_uri')} value="${input?.redirectUri ?? ''}" required>${fieldError(problems, 'redirect_uri')}
<label for="id_token_signed_response_alg">ID token signing algorithm <small>(OpenID Connect's id_token_signed_response_alg: RS256, which every OpenID Connect client library accepts by default, or ES256 when your client is set up for it)</small></label><select id="id_token_signed_response_alg" name="id_token_signed_response_alg"${invalidAttrs(problems, 'id_token_signed_response_alg')}>${ID_TOKEN_ALGS.map((a) => html`<option value="${a}"${selected(a, alg)}>${a}</option>`)}</select>${fieldError(problems, 'id_token_signed_response_alg')}`;
}

export function applicationsPage({ user, apps, problems, input, nonce, flash }: ApplicationsModel): Html {
  const rows = apps.map(
    (
      a,
    ) => html`<tr><td><a href="/settings/applications/${a.id}"><strong>${a.name}</strong></a><br><small>${a.description}</small></td><td><code data-copy="client ID">${a.client_id}</code><br><small>${a.redirect_uri}</small></td>
<td><a class="button" href="/settings/applications/${a.id}">Settings</a> <a class="button danger" href="/settings/applications/${a.id}/delete">Delete</a></td></tr>`,
  );
  // A refused registration puts the form first: the user's next step is to fix it.
  const form = html`<h2 id="register">Register an application</h2>${formProblems(problems)}
<form method="post" action="/settings/applications"><input type="hidden" name="csrf_token" value="${user.csrf}"><input type="hidden" name="form_nonce" value="${nonce}">
${detailFields(problems, input)}
<button type="submit" class="primary">Register application</button></form>`;
  return layout(
    {
      title: 'Applications',
      user,
      current: '/settings/applications',
      flash,
      mainAction: { id: 'name', label: 'Register an application' },
    },
    html`<h1>Your applications</h1><p>OAuth applications let other sites sign users in with their account here and act for them within the scopes the user allows.</p>
${apps.length ? html`<table><thead><tr><th>Application</th><th>Client</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No applications yet.</p>`}
${form}`,
  );
}

export interface ApplicationModel {
  user: PageUser;
  app: Application;
  secrets: ClientSecret[];
  problems: FormProblem[];
  input?: Required<AppDetails>;
  flash?: string | undefined;
}

const lastUsed = (s: ClientSecret) =>
  s.last_used_at === null ? 'Never used' : `Last used ${formatDate(s.last_used_at)}`;

/** RFC 9126 6: whether the authorize endpoint takes only pushed authorization requests from the app. */
function pushedRequestsForm(app: Application, csrf: string): Html {
  const checked = app.require_pushed_authorization_requests ? ' checked' : '';
  return html`<h2>Pushed authorization requests</h2>
<form method="post" action="/settings/applications/${app.id}/pushed-requests"><input type="hidden" name="csrf_token" value="${csrf}">
<p><label><input type="checkbox" id="require_pushed_authorization_requests" name="require_pushed_authorization_requests" value="true"${checked}> Require pushed authorization requests <small>(RFC 9126: the application must post each authorization request to <code>/api/open/oauth/par</code> and send the user with the request_uri it gets; a plain authorization request is refused)</small></label></p>
<button type="submit">Save</button></form>`;
}

/** One app's settings: its client ID, its client secrets (two during a rotation), its details, and deleting it. */
export function applicationPage({ user, app, secrets, problems, input, flash }: ApplicationModel): Html {
  const details = input ?? {
    name: app.name,
    description: app.description,
    homepage: app.homepage,
    redirectUri: app.redirect_uri,
    idTokenAlg: app.id_token_signed_response_alg,
  };
  const secretRows = secrets.map(
    (
      s,
      i,
    ) => html`<tr><td><strong>Client secret ${i + 1}</strong><br><small>Created ${formatDate(s.created_at)}</small></td><td>${lastUsed(s)}</td>
<td><a class="button danger" href="/settings/applications/${app.id}/secrets/${s.id}/delete">Delete</a></td></tr>`,
  );
  const generate =
    secrets.length < MAX_CLIENT_SECRETS
      ? html`<form method="post" action="/settings/applications/${app.id}/secrets"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit" id="generate-secret">Generate a new client secret</button></form>`
      : html`<p><small>An application has at most ${MAX_CLIENT_SECRETS} client secrets. Delete the one no deployment uses any more to generate another.</small></p>`;
  return layout(
    {
      title: app.name,
      user,
      current: '/settings/applications',
      flash,
      mainAction:
        !input && secrets.length < MAX_CLIENT_SECRETS
          ? { id: 'generate-secret', label: 'Generate a new client secret' }
          : { id: 'name', label: 'Application settings' },
    },
    html`<p><a href="/settings/applications">← Applications</a></p><h1>${app.name}</h1>
<p>Client ID: <code data-copy="client ID" id="app-client-id">${app.client_id}</code></p>
<h2>Client secrets</h2>
<p>A new secret keeps the existing one working until you delete it: deploy the new secret, check that its last-used time moves, then delete the old one.</p>
${secrets.length ? html`<table class="secrets"><thead><tr><th>Secret</th><th>Use</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${secretRows}</tbody></table>` : html`<p class="notice">This application has no client secret: it cannot obtain tokens until you generate one.</p>`}
${generate}
<h2>Application settings</h2>${formProblems(problems)}
<form method="post" action="/settings/applications/${app.id}"><input type="hidden" name="csrf_token" value="${user.csrf}">
${detailFields(problems, details)}
<button type="submit" class="primary">Update application</button></form>
${pushedRequestsForm(app, user.csrf)}
<h2>Delete application</h2><p>Its client ID and secrets stop working, and every token it was granted is revoked.</p>
<a class="button danger" href="/settings/applications/${app.id}/delete">Delete this application</a>`,
  );
}

export interface ClientSecretModel {
  user: PageUser;
  title: string;
  appId: number;
  clientId: string;
  secret: string;
  /** Said under the secret: what still works ("Your previous secret keeps working until you delete it."). */
  note?: string;
}

/** The one time a client secret is shown. */
export const clientSecretPage = ({ user, title, appId, clientId, secret, note }: ClientSecretModel): Html =>
  layout(
    { title, user, current: '/settings/applications' },
    html`<h1>${title}</h1><p class="notice">Copy the client secret now: it is shown only once.</p>
<p>client_id: <span data-copy="client id"><code id="client-id">${clientId}</code></span></p><p>client_secret: <span data-copy="client secret"><code id="client-secret">${secret}</code></span></p>
${note ? html`<p>${note}</p>` : ''}<p><a href="/settings/applications/${appId}">Done: back to the application</a></p>`,
  );
