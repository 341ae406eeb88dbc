import { Problem } from '../shared/errors.ts';

// The protected resources in front of which this service is the one authorization server: each is
// named by a resource identifier (RFC 8707 2, RFC 9728 1.2), `{BASE_URL}` and the path prefix of its
// requests, and publishes its metadata (RFC 9728 3) at the well-known URI with that path appended.
// An access token issued for some of them (its audience) is refused at the others.

export interface ProtectedResource {
  /** The path prefix of its requests, which is also what follows BASE_URL in its identifier. */
  path: '/api/open' | '/api/workflows' | '/mcp';
  /** RFC 9728 2 `resource_name`. */
  name: string;
  /** The scopes its operations accept (RFC 9728 2 `scopes_supported`). */
  scopes: string[];
  /**
   * Whether a token must name this resource in its audience. The MCP specification's authorization
   * section has an MCP server refuse any token not issued for it; the two APIs keep accepting a
   * token issued without a `resource`, as every client did before resource indicators.
   */
  audienceRequired: boolean;
}

export const PROTECTED_RESOURCES: readonly ProtectedResource[] = [
  { path: '/api/open', name: 'Open token interfaces', scopes: ['user_info', 'api_key'], audienceRequired: false },
  { path: '/api/workflows', name: 'Workflows API', scopes: ['workflows:read'], audienceRequired: false },
  { path: '/mcp', name: 'MCP server', scopes: ['workflows:run'], audienceRequired: true },
];

export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The resource identifier (RFC 8707 2): what a client sends as `resource` and what a token's audience holds. */
export const resourceIdentifier = (baseUrl: string, resource: ProtectedResource) => `${baseUrl}${resource.path}`;

/** Where its metadata is published (RFC 9728 3.1: the path inserted after the well-known prefix). */
export const resourceMetadataUrl = (baseUrl: string, resource: ProtectedResource) =>
  `${baseUrl}${PROTECTED_RESOURCE_METADATA_PATH}${resource.path}`;

/** The resource a request path belongs to, if any. */
export function resourceOfPath(path: string): ProtectedResource | undefined {
  return PROTECTED_RESOURCES.find((r) => path === r.path || path.startsWith(`${r.path}/`));
}

/** The resource a resource identifier names, if it is one of ours (exact comparison). */
export function resourceOfIdentifier(baseUrl: string, identifier: string): ProtectedResource | undefined {
  return PROTECTED_RESOURCES.find((r) => resourceIdentifier(baseUrl, r) === identifier);
}

/**
 * The refusal with `resource_metadata` added to its challenge (RFC 9728 5.1), so that a client
 * holding no (or a wrong) token finds the authorization server from the 401 alone.
 */
export function withResourceMetadata<E extends Error>(err: E, metadataUrl: string): E {
  if (!(err instanceof Problem)) return err;
  const challenge = err.headers['WWW-Authenticate'];
  if (challenge === undefined || challenge.includes('resource_metadata=')) return err;
  err.headers['WWW-Authenticate'] = `${challenge}, resource_metadata="${metadataUrl}"`;
  return err;
}

/**
 * The refusal with the scope a resource needs added to its challenge (RFC 6750 3), so that a client
 * asks for that scope when it signs in (the MCP specification's scope selection, its first source).
 */
export function withRequiredScope<E extends Error>(err: E, scope: string): E {
  if (!(err instanceof Problem)) return err;
  const challenge = err.headers['WWW-Authenticate'];
  if (challenge === undefined || /(^|[\s,])scope=/.test(challenge)) return err;
  err.headers['WWW-Authenticate'] = `${challenge}, scope="${scope}"`;
  return err;
}
