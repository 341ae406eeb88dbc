import { html, type Html } from '../../html/html.ts';
import type { MemberRow, Organization, Role } from '../../accounts/orgs.ts';
import { formatDate } from '../format.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from '../../html/layout.ts';

export interface OrgInput {
  namespace: string;
  name: string;
}

export interface OrganizationsModel {
  user: PageUser;
  /** The user's organizations with their role in each. */
  orgs: Array<Organization & { role: Role }>;
  problems: FormProblem[];
  input?: OrgInput | undefined;
  flash?: string | undefined;
}

export function organizationsPage({ user, orgs, problems, input, flash }: OrganizationsModel): Html {
  const rows = orgs.map(
    (o) =>
      html`<tr><td><a href="/settings/organizations/${o.namespace}"><strong>${o.name}</strong></a><br><small><code>${o.namespace}</code></small></td><td>${o.role === 'owner' ? 'Owner' : 'Member'}</td></tr>`,
  );
  return layout(
    {
      title: 'Organizations',
      user,
      current: '/settings/organizations',
      flash,
      mainAction: { id: 'namespace', label: 'Create an organization' },
    },
    html`<h1>Organizations</h1><p>An organization is a namespace its members share: access tokens created in it act there, and leave with a member who leaves.</p>
${orgs.length ? html`<table><thead><tr><th>Organization</th><th>Your role</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>You do not belong to any organization yet.</p>`}
<h2>Create an organization</h2>${formProblems(problems)}
<form method="post" action="/settings/organizations"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="namespace">Namespace <small>(letters, digits and inner hyphens, kept in lower case; unique across users and organizations; cannot be changed)</small></label><input type="text" id="namespace" name="namespace"${invalidAttrs(problems, 'namespace')} value="${input?.namespace ?? ''}" autocapitalize="none" spellcheck="false" required>${fieldError(problems, 'namespace')}
<label for="name">Display name</label><input type="text" id="name" name="name"${invalidAttrs(problems, 'name')} value="${input?.name ?? ''}" required>${fieldError(problems, 'name')}
<button type="submit" class="primary">Create organization</button></form>`,
  );
}

export interface MemberInput {
  login: string;
  role: string;
}

export interface OrganizationModel {
  user: PageUser;
  org: Organization;
  members: MemberRow[];
  /** The user's role here: owners add and remove members; a member can leave. */
  role: Role;
  problems: FormProblem[];
  input?: MemberInput | undefined;
  flash?: string | undefined;
}

export function organizationPage({ user, org, members, role, problems, input, flash }: OrganizationModel): Html {
  const owner = role === 'owner';
  const rows = members.map((m) => {
    const self = m.user_id === user.id;
    const action =
      owner || self
        ? html`<a class="button danger" href="/settings/organizations/${org.namespace}/members/${m.login}/remove">${self ? 'Leave' : 'Remove'}</a>`
        : '';
    return html`<tr><td><strong>${m.login}</strong>${self ? html` <small>(you)</small>` : ''}<br><small>${m.name}</small></td><td>${m.role === 'owner' ? 'Owner' : 'Member'}</td><td>${formatDate(m.created_at)}</td><td>${action}</td></tr>`;
  });
  const addForm = owner
    ? html`<h2>Add a member</h2>${formProblems(problems)}
<form method="post" action="/settings/organizations/${org.namespace}/members"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="login">Username</label><input type="text" id="login" name="login"${invalidAttrs(problems, 'login')} value="${input?.login ?? ''}" autocapitalize="none" spellcheck="false" required>${fieldError(problems, 'login')}
<label for="role">Role</label><select id="role" name="role"${invalidAttrs(problems, 'role')}><option value="member"${input?.role === 'owner' ? '' : html` selected`}>Member: uses the namespace</option><option value="owner"${input?.role === 'owner' ? html` selected` : ''}>Owner: also adds and removes members</option></select>${fieldError(problems, 'role')}
<button type="submit" class="primary">Add member</button></form>`
    : formProblems(problems);
  return layout(
    {
      title: org.name,
      user,
      current: '/settings/organizations',
      flash,
      mainAction: owner ? { id: 'login', label: 'Add a member' } : undefined,
    },
    html`<p><a href="/settings/organizations">← Organizations</a></p><h1>${org.name}</h1><p>Namespace <code>${org.namespace}</code> · you are ${owner ? 'an owner' : 'a member'}.</p>
<h2>Members</h2><table><thead><tr><th>Member</th><th>Role</th><th>Joined</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>
${addForm}`,
  );
}
