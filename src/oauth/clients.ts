import type { Request } from 'express';
import type { DbContext } from '../context.ts';
import { invalidClient, twoClientCredentials } from '../shared/errors.ts';
import { findAppByClientId, verifyClientSecret, type Application } from '../accounts/apps.ts';
import { clientCredentials } from './clientAuth.ts';

// The OAuth clients are the platform's registered applications, read through its service.

/** How a client authenticates at the token endpoint (RFC 7591 2); `none`: a public client. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';
/** Who registered it: a user or the operator (`console`), itself (`dynamic`, RFC 7591), or a metadata document. */
export type RegistrationKind = 'console' | 'dynamic' | 'metadata_document';

export interface OAuthClient {
  id: number;
  clientId: string;
  name: string;
  description: string;
  homepage: string;
  /** The first of redirectUris ('' when it has none: a device-flow-only client). */
  redirectUri: string;
  /** Every registered redirect URI (one for an application registered in the console). */
  redirectUris: string[];
  /** The user who registered it (the consent page names them); null for a client that registered itself. */
  ownerUserId: number | null;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  registrationKind: RegistrationKind;
  /**
   * The authorize endpoint refuses a request without code_challenge (RFC 9700 2.1.1). The operator
   * may exempt a confidential client (admin CLI); a public client never is (RFC 9700 2.1.1 MUST).
   */
  pkceRequired: boolean;
  /**
   * The scopes a self-registered client registered (RFC 7591 2 `scope`): it may ask for no other.
   * Undefined: any scope the service offers.
   */
  registeredScopes?: string[];
  /** The authorize endpoint takes only pushed authorization requests from it (RFC 9126 6). */
  requirePushedRequests: boolean;
}

/** A public client (RFC 6749 2.1): it has no secret and authenticates with its client_id alone. */
export function isPublicClient(client: Pick<OAuthClient, 'tokenEndpointAuthMethod'>): boolean {
  return client.tokenEndpointAuthMethod === 'none';
}

/** The registered `scope` of a client's metadata (RFC 7591 2), if it registered one. */
function registeredScopesOf(app: Application): string[] | undefined {
  const scope = (JSON.parse(app.client_metadata ?? '{}') as { scope?: string }).scope;
  return scope === undefined ? undefined : scope.split(' ').filter(Boolean);
}

/** The requested scopes a client may not ask for: those outside its registered scope, if any. */
export function scopesNotRegistered(client: Pick<OAuthClient, 'registeredScopes'>, scopes: string[]): string[] {
  const allowed = client.registeredScopes;
  return allowed ? scopes.filter((s) => !allowed.includes(s)) : [];
}

function redirectUrisOf(app: Application): string[] {
  if (app.redirect_uris) return JSON.parse(app.redirect_uris) as string[];
  return app.redirect_uri ? [app.redirect_uri] : [];
}

export function toClient(app: Application): OAuthClient {
  const tokenEndpointAuthMethod = (app.token_endpoint_auth_method ?? 'client_secret_basic') as TokenEndpointAuthMethod;
  return {
    id: app.id,
    clientId: app.client_id,
    name: app.name,
    description: app.description,
    homepage: app.homepage,
    redirectUri: app.redirect_uri,
    redirectUris: redirectUrisOf(app),
    ownerUserId: app.owner_user_id,
    tokenEndpointAuthMethod,
    registrationKind: (app.registration_kind ?? 'console') as RegistrationKind,
    pkceRequired: Boolean(app.pkce_required) || tokenEndpointAuthMethod === 'none',
    requirePushedRequests: Boolean(app.require_pushed_authorization_requests),
    ...(app.client_metadata ? { registeredScopes: registeredScopesOf(app) } : {}),
  };
}

export async function findClientByClientId(ctx: DbContext, clientId: string): Promise<OAuthClient | null> {
  const app = await findAppByClientId(ctx, clientId);
  return app ? toClient(app) : null;
}

/**
 * The client the credentials authenticate: a confidential one whose secret matches (RFC 6749
 * 2.3.1, compared in constant time on the hash), or a public one named by its client_id alone
 * (`secret` ''). A secret sent for a public client, or none for a confidential one, is no match.
 */
export async function authenticateClient(
  ctx: DbContext,
  clientId: string,
  secret: string,
): Promise<OAuthClient | null> {
  const app = await findAppByClientId(ctx, clientId);
  if (!app) return null;
  const client = toClient(app);
  if (isPublicClient(client)) return secret === '' ? client : null;
  return secret !== '' && (await verifyClientSecret(ctx, app.id, secret)) ? client : null;
}

/**
 * The client that a request to a client-authenticated endpoint (token revocation, introspection,
 * pushed and device authorization requests) authenticates, as at the token endpoint: one method per
 * request (RFC 6749 2.3; Basic with a body client_id equal to Basic's is one method), else 401.
 * `confidentialOnly`: a public client is refused too (introspection needs client authentication).
 */
export async function authenticatedClient(
  ctx: DbContext,
  req: Request,
  options: { confidentialOnly?: boolean } = {},
): Promise<OAuthClient> {
  const credentials = clientCredentials(req);
  if (credentials.secondMethod) throw twoClientCredentials();
  const client = await authenticateClient(ctx, credentials.clientId, credentials.clientSecret);
  if (!client || (options.confidentialOnly && isPublicClient(client))) throw invalidClient();
  return client;
}
