import type { Request } from 'express';
import type { DbContext } from '../context.ts';
import { invalidClient, twoClientCredentials } from '../shared/errors.ts';
import { findAppByClientId, verifyClientSecret, type Application } from '../accounts/apps.ts';
import { clientCredentials } from './clientAuth.ts';

// The OAuth clients are the platform's registered applications, read through its service.

export interface OAuthClient {
  id: number;
  clientId: string;
  name: string;
  description: string;
  homepage: string;
  redirectUri: string;
  /** The user who registered it (the consent page names them). */
  ownerUserId: number;
  /**
   * The authorize endpoint refuses a request without code_challenge (RFC 9700 2.1.1). Every client
   * here is confidential (it has a client secret); the operator may exempt one (admin CLI).
   */
  pkceRequired: boolean;
  /** The authorize endpoint takes only pushed authorization requests from it (RFC 9126 6). */
  requirePushedRequests: boolean;
}

function toClient(app: Application): OAuthClient {
  return {
    id: app.id,
    clientId: app.client_id,
    name: app.name,
    description: app.description,
    homepage: app.homepage,
    redirectUri: app.redirect_uri,
    ownerUserId: app.owner_user_id,
    pkceRequired: Boolean(app.pkce_required),
    requirePushedRequests: Boolean(app.require_pushed_authorization_requests),
  };
}

export async function findClientByClientId(ctx: DbContext, clientId: string): Promise<OAuthClient | null> {
  const app = await findAppByClientId(ctx, clientId);
  return app ? toClient(app) : null;
}

/** The client one of whose secrets matches (RFC 6749 2.3.1), compared in constant time on the hash. */
export async function authenticateClient(
  ctx: DbContext,
  clientId: string,
  secret: string,
): Promise<OAuthClient | null> {
  const app = await findAppByClientId(ctx, clientId);
  return app && (await verifyClientSecret(ctx, app.id, secret)) ? toClient(app) : null;
}

/**
 * The client that a request to a client-authenticated endpoint (token revocation, introspection,
 * pushed and device authorization requests) authenticates, as at the token endpoint: one method per
 * request (RFC 6749 2.3; Basic with a body client_id equal to Basic's is one method), else 401.
 */
export async function authenticatedClient(ctx: DbContext, req: Request): Promise<OAuthClient> {
  const credentials = clientCredentials(req);
  if (credentials.secondMethod) throw twoClientCredentials();
  const client = await authenticateClient(ctx, credentials.clientId, credentials.clientSecret);
  if (!client) throw invalidClient();
  return client;
}
