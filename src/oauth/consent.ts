import { html, type Html } from '../html/html.ts';
import { layout } from '../html/layout.ts';
import type { AuthorizeRequest } from './authorize.ts';
import type { OAuthClient } from './clients.ts';
import { SCOPES, isScope, splitScope } from './scopes.ts';
import { splitResources } from './resources.ts';

/** The consent page: who asks, for what, and an Allow/Deny form carrying the request and a CSRF token. */
export function consentPage(
  request: AuthorizeRequest,
  user: { login: string },
  csrf: string,
  ownerLogin?: string,
): Html {
  const { client } = request;
  const scopes = splitScope(request.scope).filter(isScope);
  // A pushed request travels as its request_uri (RFC 9126 4), which the decision loads again.
  const pushed = request.pushed && {
    client_id: client.clientId,
    request_uri: request.pushed.requestUri,
    csrf_token: csrf,
  };
  const hidden = pushed ?? {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallengeMethod,
    nonce: request.nonce,
    csrf_token: csrf,
  };
  // RFC 8707: each resource as its own field, as the request sent them (a pushed request keeps its own).
  const resources = pushed ? [] : splitResources(request.resources).map((r) => ['resource', r] as const);
  const fields = [...Object.entries(hidden), ...resources]
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const body = html`${consentDetails(client, scopes, user, ownerLogin)}
<p>You will be sent to <code>${request.redirectUri}</code>.</p>
<form method="post" action="/oauth/authorize/decision">${fields}
<button type="submit" name="decision" value="allow" id="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>`;
  return layout(
    {
      title: `Authorize ${client.name}`,
      user: { login: user.login, csrf },
      mainAction: { id: 'allow', label: 'Allow or Deny' },
    },
    body,
  );
}

/** The service's name, as the page header shows it. */
const SERVICE_NAME = 'OpenAuth';

function hostOf(uri: string): string | null {
  try {
    return new URL(uri).host || null;
  } catch {
    return null;
  }
}

/**
 * Who vouches for the app: the user who registered it, or, for a client that registered itself
 * (RFC 7591), nobody: its name and site are its own claims, so the page says so and shows its
 * client_id and its site's host rather than a link named by the client.
 */
function provenance(
  client: Pick<OAuthClient, 'homepage' | 'registrationKind' | 'clientId'>,
  ownerLogin: string | undefined,
): Html {
  if (client.registrationKind !== 'console') {
    const host = hostOf(client.homepage);
    return html`<p class="app-meta unreviewed">Registered by itself, not reviewed by ${SERVICE_NAME}. Client ID: <code>${client.clientId}</code>${host ? html` · Site: ${host}` : ''}</p>`;
  }
  const homepage = /^https?:\/\//i.test(client.homepage)
    ? html`<a href="${client.homepage}" rel="noopener noreferrer">${client.homepage}</a>`
    : html`${client.homepage}`;
  return html`<p class="app-meta">${ownerLogin ? html`Registered by <strong>${ownerLogin}</strong> · ` : ''}Homepage: ${homepage}</p>`;
}

/**
 * What the user consents to, the same in every flow (the code flow's page, the device flow's):
 * the app, who registered it (or that it registered itself), its homepage, and the scopes in words.
 */
export function consentDetails(
  client: Pick<OAuthClient, 'name' | 'description' | 'homepage' | 'registrationKind' | 'clientId'> & {
    metadataDocumentHost?: string;
  },
  scopes: string[],
  user: { login: string },
  ownerLogin?: string,
): Html {
  return html`<h1>Authorize ${client.name}</h1>
<p class="app-description">${client.description}</p>
${client.metadataDocumentHost ? metadataDocumentNote(client) : provenance(client, ownerLogin)}
<p><strong>${client.name}</strong> wants to access your account <strong>${user.login}</strong>:</p>
<ul class="scopes">${scopes.filter(isScope).map((s) => html`<li><code>${s}</code>: ${SCOPES[s]}</li>`)}</ul>`;
}

/** A Client ID Metadata Document's client describes itself: say where from, and that nobody here checked it. */
function metadataDocumentNote(client: { name: string; metadataDocumentHost?: string }): Html | string {
  if (!client.metadataDocumentHost) return '';
  return html`<p class="app-meta app-unreviewed"><strong>${client.name}</strong> is identified by its metadata document at <strong>${client.metadataDocumentHost}</strong>; this service has not reviewed it.</p>
`;
}

/** RFC 6749 4.1.2.1: an invalid client or redirect_uri is told to the user, not to the client. */
export function authorizeErrorPage(message: string): Html {
  return layout(
    { title: 'Authorization error' },
    html`<h1>Authorization error</h1><p class="error">${message}</p><p>The application sent an invalid authorization request. You were not redirected.</p>`,
  );
}
