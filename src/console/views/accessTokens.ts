import {
  ACCESS_TOKEN_PERMISSIONS,
  isExpired,
  TOKEN_EXPIRY_DAYS,
  USAGE_SCENARIOS,
  type AccessToken,
} from '../../accounts/accessTokens.ts';
import { html, type Html } from '../../html/html.ts';
import { formatDate } from '../format.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from '../../html/layout.ts';
import type { Budget } from '../../runs/monthlyBudgets.ts';
import { budgetSummary } from './budgets.ts';

export interface TokenInput {
  name: string;
  namespace: string;
  usageScenario: string;
  permissions: string[];
  /** Days until it expires, as chosen ('' for never). */
  expiresInDays: string;
}

/**
 * What each usage scenario is for, said where the user picks one: when to pick it, not a
 * restatement of its name. The service treats both alike; the label is for whoever serves and
 * bills the calls downstream (it travels in the usage logs and the proxy tokens' claim).
 */
const USAGE_SCENARIO_HELP: Record<(typeof USAGE_SCENARIOS)[number], Html> = {
  paid: html`<strong>paid</strong>: production use on a paid plan. Pick it when the calls are your product's real traffic and should count as billable usage.`,
  trial: html`<strong>trial</strong>: trying things out (development, tests, a demo, an evaluation). Pick it when the calls should count as free trial usage; whoever serves them may limit trial calls more strictly.`,
};

const expiry = (t: AccessToken) =>
  t.expires_at === null
    ? html`<small>No expiry</small>`
    : isExpired(t)
      ? html`<strong class="expired">Expired ${formatDate(t.expires_at)}</strong>`
      : html`<small>Expires ${formatDate(t.expires_at)}</small>`;

export interface AccessTokensModel {
  user: PageUser;
  tokens: AccessToken[];
  /** The monthly budgets of the tokens that have one, by token id. */
  budgets?: ReadonlyMap<number, Budget>;
  /** The user's login and the organizations they belong to. */
  namespaces: string[];
  /** Why the last creation was refused, with what the user chose. */
  problems: FormProblem[];
  input?: TokenInput;
  flash?: string | undefined;
}

/** A fresh form's permissions: calling the workflows API is what a key is for (without it, the first call is a 403). */
const DEFAULT_PERMISSIONS: readonly string[] = ['workflows'];

/** A fresh form's scenario: a newcomer's first key is for trying things out (the hint says so). */
const DEFAULT_USAGE_SCENARIO = 'trial';

const selected = (value: string, chosen: string | undefined) => (value === chosen ? html` selected` : '');

export function accessTokensPage({
  user,
  tokens,
  budgets,
  namespaces,
  problems,
  input,
  flash,
}: AccessTokensModel): Html {
  const rows = tokens.map(
    (
      t,
    ) => html`<tr><td><strong>${t.name}</strong><br><small><code>${t.token_prefix}…</code></small></td><td>${t.namespace}</td><td>${t.usage_scenario}</td>
<td>${t.permissions.map((p) => html`<code>${p}</code> `)}</td><td>${formatDate(t.created_at)}<br><small>${t.last_used_at === null ? 'never used' : `used ${formatDate(t.last_used_at)}`}</small><br>${expiry(t)}</td>
<td>${budgetSummary(budgets?.get(t.id))}<br><a href="/settings/tokens/${t.id}/budget">Budget<span class="visually-hidden"> of ${t.name}</span></a></td>
<td><a class="button danger" href="/settings/tokens/${t.id}/delete">Delete</a></td></tr>`,
  );
  return layout(
    {
      title: 'Access tokens',
      user,
      current: '/settings/tokens',
      flash,
      mainAction: { id: 'name', label: 'Create an access token' },
    },
    html`<h1>Access tokens</h1><p>Raw access tokens (API keys) call the workflows and serverless APIs. Apps you authorize never see them: they get short-lived proxy tokens instead.</p>
${tokens.length ? html`<table><thead><tr><th>Token</th><th>Namespace</th><th>Usage</th><th>Permissions</th><th>Created</th><th>Monthly budget</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No access tokens yet.</p>`}
<h2>Create an access token</h2>${formProblems(problems)}
<form method="post" action="/settings/tokens"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="name">Name</label><input type="text" id="name" name="name"${invalidAttrs(problems, 'name')} value="${input?.name ?? ''}" required>${fieldError(problems, 'name')}
<label for="namespace">Namespace <small>(your own, or an organization you belong to: the token acts there)</small></label><select id="namespace" name="namespace"${invalidAttrs(problems, 'namespace')}>${namespaces.map((n) => html`<option value="${n}"${selected(n, input?.namespace)}>${n}</option>`)}</select>${fieldError(problems, 'namespace')}
<label for="usage_scenario">Usage scenario</label><p class="hint" id="usage_scenario-help">Who the token's calls count against. This service treats both alike (the same models and limits); it records the scenario in its usage log of every serverless call and hands it on in the proxy tokens apps get from this token (the <code>usage_scenario</code> claim), so the functions and billing behind the serverless API can tell trial calls from paid ones. ${USAGE_SCENARIOS.map((u) => html`<br>${USAGE_SCENARIO_HELP[u]}`)}<br>Not sure? Keep <strong>trial</strong>. A token's scenario cannot be changed later: create another token to switch.</p><select id="usage_scenario" name="usage_scenario" aria-describedby="usage_scenario-help${problems.some((p) => p.field === 'usage_scenario') ? ' usage_scenario-error' : ''}"${problems.some((p) => p.field === 'usage_scenario') ? html` aria-invalid="true"` : ''}>${USAGE_SCENARIOS.map((u) => html`<option value="${u}"${selected(u, input?.usageScenario ?? DEFAULT_USAGE_SCENARIO)}>${u}</option>`)}</select>${fieldError(problems, 'usage_scenario')}
<label for="expires_in_days">Expiration</label><select id="expires_in_days" name="expires_in_days"${invalidAttrs(problems, 'expires_in_days')}><option value=""${selected('', input?.expiresInDays ?? '')}>No expiration</option>${TOKEN_EXPIRY_DAYS.map((d) => html`<option value="${d}"${selected(String(d), input?.expiresInDays ?? '')}>${d} days</option>`)}</select>${fieldError(problems, 'expires_in_days')}
<fieldset${invalidAttrs(problems, 'permissions')}><legend>Permissions</legend>${ACCESS_TOKEN_PERMISSIONS.map(
      (p) =>
        html`<label><input type="checkbox" name="permissions" value="${p}"${(input?.permissions ?? DEFAULT_PERMISSIONS).includes(p) ? html` checked` : ''}> ${p}</label>`,
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
<p>Namespace: ${record.namespace} · usage: ${record.usage_scenario} · ${record.expires_at === null ? 'no expiry' : `expires ${formatDate(record.expires_at)}`}</p><p><span data-copy="access token"><code id="access-token">${token}</code></span></p>
<p><a href="/settings/tokens">Back to access tokens</a></p>`,
  );
