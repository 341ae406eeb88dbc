import { ACCESS_TOKEN_PERMISSIONS, USAGE_SCENARIOS, type AccessToken } from '../accessTokens.ts';
import { html, type Html } from '../html.ts';
import { formatDate, type PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from './layout.ts';

export interface TokenInput {
  name: string;
  namespace: string;
  usageScenario: string;
  permissions: string[];
}

export interface AccessTokensModel {
  user: PageUser;
  tokens: AccessToken[];
  /** The user's login and the organizations they belong to. */
  namespaces: string[];
  /** Why the last creation was refused, with what the user chose. */
  problems: FormProblem[];
  input?: TokenInput;
  flash?: string | undefined;
}

const selected = (value: string, chosen: string | undefined) => (value === chosen ? html` selected` : '');

export function accessTokensPage({ user, tokens, namespaces, problems, input, flash }: AccessTokensModel): Html {
  const rows = tokens.map(
    (t) => html`<tr><td><strong>${t.name}</strong><br><small><code>${t.token_prefix}…</code></small></td><td>${t.namespace}</td><td>${t.usage_scenario}</td>
<td>${t.permissions.map((p) => html`<code>${p}</code> `)}</td><td>${formatDate(t.created_at)}<br><small>${t.last_used_at === null ? 'never used' : `used ${formatDate(t.last_used_at)}`}</small></td>
<td><a class="button danger" href="/settings/tokens/${t.id}/delete">Delete</a></td></tr>`,
  );
  return layout(
    { title: 'Access tokens', user, current: '/settings/tokens', flash },
    html`<h1>Access tokens</h1><p>Raw access tokens (API keys) call the workflows and serverless APIs. Apps you authorize never see them: they get short-lived proxy tokens instead.</p>
${tokens.length ? html`<table><thead><tr><th>Token</th><th>Namespace</th><th>Usage</th><th>Permissions</th><th>Created</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No access tokens yet.</p>`}
<h2>Create an access token</h2>${formProblems(problems)}
<form method="post" action="/settings/tokens"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="name">Name</label><input type="text" id="name" name="name"${invalidAttrs(problems, 'name')} value="${input?.name ?? ''}" required>${fieldError(problems, 'name')}
<label for="namespace">Namespace</label><select id="namespace" name="namespace">${namespaces.map((n) => html`<option value="${n}"${selected(n, input?.namespace)}>${n}</option>`)}</select>
<label for="usage_scenario">Usage scenario</label><select id="usage_scenario" name="usage_scenario"${invalidAttrs(problems, 'usage_scenario')}>${USAGE_SCENARIOS.map((u) => html`<option value="${u}"${selected(u, input?.usageScenario)}>${u}</option>`)}</select>${fieldError(problems, 'usage_scenario')}
<fieldset${invalidAttrs(problems, 'permissions')}><legend>Permissions</legend>${ACCESS_TOKEN_PERMISSIONS.map(
      (p) => html`<label><input type="checkbox" name="permissions" value="${p}"${input?.permissions.includes(p) ? html` checked` : ''}> ${p}</label>`,
    )}${fieldError(problems, 'permissions')}</fieldset>
<button type="submit" class="primary">Create token</button></form>`,
  );
}

export interface TokenCreatedModel {
  user: PageUser;
  token: string;
  record: AccessToken;
}

/** The one time the plaintext exists outside the user's hands: a no-store page. */
export const tokenCreatedPage = ({ user, token, record }: TokenCreatedModel): Html =>
  layout(
    { title: `Created ${record.name}`, user },
    html`<h1>Created ${record.name}</h1><p class="notice">Copy the token now: it is shown only once.</p>
<p>Namespace: ${record.namespace} · usage: ${record.usage_scenario}</p><p><code id="access-token">${token}</code></p>
<p><a href="/settings/tokens">Back to access tokens</a></p>`,
  );
