import type { Grant, Metadata } from './grant.ts';
import { authorizationCode } from './authorizationCode.ts';
import { refreshToken } from './refreshToken.ts';
import { tokenExchange } from './tokenExchange.ts';
import { deviceCode } from './deviceCode.ts';

// The grant types this server offers, one module each: the token endpoint (token.ts), both
// metadata documents (metadata.ts) and the metrics read this list. A grant that does not descend
// from a code stores its tokens without an authorization row (TokenModel#grantedDirectly).

export const GRANTS: readonly Grant[] = [authorizationCode, refreshToken, tokenExchange, deviceCode];

/** Every registered `grant_type`, as the library's clients carry them (`client.grants`). */
export const GRANT_TYPES: string[] = GRANTS.map((g) => g.type);

/** The grant that takes response_type=code at the authorization endpoint (RFC 7591 2.1 pairs them). */
export const CODE_GRANT_TYPE: string = authorizationCode.type;

/** The grant types open to public clients and to clients registering themselves (Grant `publicClients`). */
export const PUBLIC_CLIENT_GRANT_TYPES: string[] = GRANTS.filter((g) => g.publicClients).map((g) => g.type);

/**
 * The library's `requireClientAuthentication`: no grant type requires a secret of it, so a public
 * client's client_id alone reaches the model, whose getClient decides (a confidential client
 * without its secret is invalid_client there).
 */
export function clientAuthenticationByGrant(): Record<string, boolean> {
  return Object.fromEntries(GRANTS.map((g) => [g.type, false]));
}

/** The library's `extendedGrantTypes`: every grant's class by its name. */
export function extendedGrantTypes(): Record<string, Grant['handler']> {
  return Object.fromEntries(GRANTS.map((g) => [g.type, g.handler]));
}

/** What the grants add to a metadata document beside `grant_types_supported`: the endpoints they bring. */
export function grantsMetadata(base: string, grants: readonly Grant[] = GRANTS): Partial<Metadata> {
  return Object.assign({}, ...grants.map((g) => g.metadata?.(base) ?? {})) as Partial<Metadata>;
}

/** The grant of a request's `grant_type`, when it is registered. */
export const grantOf = (grantType: unknown): Grant | undefined => GRANTS.find((g) => g.type === grantType);

/** The metrics label of a request's `grant_type`: its grant's, or `other` (a bounded label set). */
export function grantMetricsLabel(grantType: unknown): string {
  return grantOf(grantType)?.metricsLabel ?? 'other';
}
