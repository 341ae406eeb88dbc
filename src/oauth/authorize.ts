import type { AppContext } from '../context.ts';
import { metadataDocumentClient, MetadataDocumentError } from './metadataDocuments.ts';
import { METADATA_DOCUMENT_ID_PREFIX } from '../accounts/clientIds.ts';
import { looksLikeMetadataDocumentUrl } from './metadataDocument.ts';
import { AuthorizePageError, AuthorizeRedirectError } from '../shared/errors.ts';
import { isScope, joinScopes, splitScope } from './scopes.ts';
import { findClientByClientId, scopesNotRegistered, type OAuthClient } from './clients.ts';
import { requestedResources } from './resources.ts';
import { redirectUriAllowed } from './redirectUris.ts';

// GET /oauth/authorize (and the consent decision, which re-checks the same request) as the ordered
// steps of RFC 6749 4.1.1 / 4.1.2.1 and RFC 7636 4.3. The first two steps fail with a page (the
// redirect_uri cannot be trusted yet); every later one redirects the error to the client.

/** A validated authorization request. */
export interface AuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  scope: string;
  state: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: 'S256' | undefined;
  /** OpenID Connect Core 3.1.2.1: returned in the ID token. */
  nonce: string | undefined;
  /** OpenID Connect Core 3.1.2.1: which pages the client wants shown (none, login, consent). */
  prompt: ReadonlySet<Prompt>;
  /** OpenID Connect Core 3.1.2.1: the oldest login, in seconds, the client accepts. */
  maxAge: number | undefined;
  /** RFC 8707: the resources named (space separated), or null; the code's grant is for them. */
  resources: string | null;
  /** RFC 9126: the pushed request it was loaded from (par.ts), used up by the code or the decision. */
  pushed?: { id: number; requestUri: string; pushedAt: number };
}

export type Prompt = 'none' | 'login' | 'consent';
const PROMPTS: ReadonlySet<string> = new Set<Prompt>(['none', 'login', 'consent']);

type Params = Record<string, unknown>;
type Draft = Partial<AuthorizeRequest>;
/** A check of the request's parameters once the client is known: no I/O. */
type Step = (params: Params, draft: Draft) => void;

/** A parameter sent at most once (3.1: "MUST NOT be included more than once"). */
function single(params: Params, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' ? value : undefined;
}

function isRepeated(params: Params, name: string): boolean {
  const value = params[name];
  return value !== undefined && typeof value !== 'string';
}

async function checkClient(ctx: AppContext, params: Params, draft: Draft): Promise<void> {
  if (isRepeated(params, 'client_id')) throw new AuthorizePageError('client_id was sent more than once.');
  const clientId = single(params, 'client_id');
  if (!clientId) throw new AuthorizePageError('The request has no client_id.');
  const client = await clientOf(ctx, clientId);
  if (!client) throw new AuthorizePageError('There is no application with this client_id.');
  draft.client = client;
}

const DOCUMENT_PROBLEMS = {
  url: 'This client_id is not an acceptable client metadata document URL',
  fetch: "The client's metadata document could not be fetched",
  invalid: "The client's metadata document is invalid",
};

/**
 * An https client_id is a Client ID Metadata Document's URL (metadataDocuments.ts): what is wrong
 * with it or its document is a page, like an unknown client, since no redirect URI is verified.
 */
async function clientOf(ctx: AppContext, clientId: string): Promise<OAuthClient | null> {
  // Such a client is asked for by its URL only, so the operator's host list and its document's
  // refetch always apply: never by the id it is stored under.
  if (clientId.startsWith(METADATA_DOCUMENT_ID_PREFIX)) return null;
  if (!looksLikeMetadataDocumentUrl(clientId)) return findClientByClientId(ctx, clientId);
  try {
    return await metadataDocumentClient(ctx, clientId);
  } catch (error) {
    if (error instanceof MetadataDocumentError)
      throw new AuthorizePageError(`${DOCUMENT_PROBLEMS[error.kind]}: ${error.message}`);
    throw error;
  }
}

const checkRedirectUri: Step = (params, draft) => {
  if (isRepeated(params, 'redirect_uri')) throw new AuthorizePageError('redirect_uri was sent more than once.');
  const redirectUri = single(params, 'redirect_uri');
  if (!redirectUri) throw new AuthorizePageError('The request has no redirect_uri.');
  // Exact string comparison (RFC 9700 2.1): no prefix, no normalisation; a self-registered
  // client's loopback URIs on any port (RFC 8252 7.3, redirectUris.ts).
  if (!redirectUriAllowed(draft.client!, redirectUri)) {
    throw new AuthorizePageError("The redirect_uri does not match the application's registered callback.");
  }
  draft.redirectUri = redirectUri;
};

const checkState: Step = (params, draft) => {
  if (isRepeated(params, 'state'))
    throw new AuthorizeRedirectError('invalid_request', 'state was sent more than once.');
  const state = single(params, 'state');
  draft.state = state === '' ? undefined : state;
  // Characters as openapi.yaml's maxLength counts them (code points), not UTF-16 units.
  if (state && [...state].length > 2000) {
    draft.state = undefined;
    throw new AuthorizeRedirectError('invalid_request', 'state is longer than 2000 characters.');
  }
};

const checkNoRepeats: Step = (params) => {
  for (const name of [
    'response_type',
    'scope',
    'code_challenge',
    'code_challenge_method',
    'nonce',
    'prompt',
    'max_age',
  ]) {
    if (isRepeated(params, name))
      throw new AuthorizeRedirectError('invalid_request', `${name} was sent more than once.`);
  }
};

const checkResponseType: Step = (params) => {
  const responseType = single(params, 'response_type');
  if (!responseType) throw new AuthorizeRedirectError('invalid_request', 'response_type is required.');
  if (responseType !== 'code') {
    throw new AuthorizeRedirectError('unsupported_response_type', 'Only response_type=code is supported.');
  }
};

const checkScope: Step = (params, draft) => {
  const scopes = splitScope(single(params, 'scope'));
  if (scopes.length === 0) throw new AuthorizeRedirectError('invalid_request', 'scope is required.');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new AuthorizeRedirectError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  const unregistered = scopesNotRegistered(draft.client!, scopes);
  if (unregistered.length)
    throw new AuthorizeRedirectError('invalid_scope', `Not a scope this client registered: ${unregistered.join(' ')}`);
  draft.scope = joinScopes(scopes);
};

const checkPkce: Step = (params, draft) => {
  const challenge = single(params, 'code_challenge');
  const method = single(params, 'code_challenge_method');
  if (!challenge) {
    if (method)
      throw new AuthorizeRedirectError('invalid_request', 'code_challenge_method was sent without code_challenge.');
    // RFC 9700 2.1.1: PKCE for every client, confidential ones too, unless the operator exempted it.
    if (draft.client!.pkceRequired)
      throw new AuthorizeRedirectError(
        'invalid_request',
        'PKCE is required: send code_challenge (the base64url SHA-256 of a code verifier) with code_challenge_method=S256.',
      );
    return;
  }
  // RFC 7636 4.3: absent method means plain; we only accept S256 (RFC 9700 2.1.1).
  if (method !== 'S256') throw new AuthorizeRedirectError('invalid_request', 'code_challenge_method must be S256.');
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
    throw new AuthorizeRedirectError(
      'invalid_request',
      'code_challenge must be the base64url SHA-256 of the verifier (43 characters).',
    );
  }
  draft.codeChallenge = challenge;
  draft.codeChallengeMethod = 'S256';
};

/**
 * OpenID Connect Core 3.1.2.1's nonce, prompt and max_age, accepted with or without `openid` (an
 * OAuth client may ask for a fresh login or the consent page too). select_account is not offered
 * (one account per session): an unknown prompt value is invalid_request, as oidc-provider answers.
 */
const checkOpenIdParameters: Step = (params, draft) => {
  const nonce = single(params, 'nonce');
  if (nonce !== undefined && [...nonce].length > 255)
    throw new AuthorizeRedirectError('invalid_request', 'nonce is longer than 255 characters.');
  draft.nonce = nonce === '' ? undefined : nonce;
  const prompt = splitScope(single(params, 'prompt'));
  const unknown = prompt.filter((p) => !PROMPTS.has(p));
  if (unknown.length)
    throw new AuthorizeRedirectError('invalid_request', `Unsupported prompt value: ${unknown.join(' ')}`);
  if (prompt.includes('none') && prompt.length > 1)
    throw new AuthorizeRedirectError('invalid_request', 'prompt=none cannot be combined with another value.');
  draft.prompt = new Set(prompt as Prompt[]);
  const maxAge = single(params, 'max_age');
  if (maxAge !== undefined && !/^\d{1,9}$/.test(maxAge))
    throw new AuthorizeRedirectError('invalid_request', 'max_age must be a whole number of seconds.');
  draft.maxAge = maxAge === undefined ? undefined : Number(maxAge);
};

/** RFC 8707 2: `resource` may repeat; each an absolute URI without a fragment, one of ours (else invalid_target, redirected). */
const checkResources =
  (baseUrl: string): Step =>
  (params, draft) => {
    draft.resources = requestedResources(
      baseUrl,
      params.resource,
      (description) => new AuthorizeRedirectError('invalid_target', description),
    );
  };

const steps: Step[] = [
  checkRedirectUri,
  checkState,
  checkNoRepeats,
  checkResponseType,
  checkScope,
  checkPkce,
  checkOpenIdParameters,
];

/**
 * Every step after the client's, in order, for `client`: throws AuthorizePageError or
 * AuthorizeRedirectError; for the latter, `partial` tells where to send it (redirect_uri and state
 * are set by then). `baseUrl`: the identifiers of this server's resources start with it.
 */
export function checkAuthorizeParameters(
  client: OAuthClient,
  params: Params,
  baseUrl: string,
  partial: Draft = {},
): AuthorizeRequest {
  partial.client = client;
  for (const step of [...steps, checkResources(baseUrl)]) step(params, partial);
  return partial as AuthorizeRequest;
}

/** Finds the client, then runs every other step (checkAuthorizeParameters). */
export async function validateAuthorizeRequest(
  ctx: AppContext,
  params: Params,
  partial: Draft = {},
): Promise<AuthorizeRequest> {
  await checkClient(ctx, params, partial);
  return checkAuthorizeParameters(partial.client!, params, ctx.config.BASE_URL, partial);
}

/** The redirect_uri with the response parameters appended (4.1.2 / 4.1.2.1), keeping its own query. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  return url.toString();
}
