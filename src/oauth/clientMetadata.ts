import { invalidClientMetadata, invalidRedirectUriMetadata } from '../shared/errors.ts';
import { DEFAULT_ID_TOKEN_ALG } from '../accounts/apps.ts';
import { ID_TOKEN_ALGS } from '../accounts/validate.ts';
import type { TokenEndpointAuthMethod } from './clients.ts';
import { CODE_GRANT_TYPE as CODE_GRANT, PUBLIC_CLIENT_GRANT_TYPES } from './grants/registry.ts';
import { isLoopbackHttp } from './redirectUris.ts';
import { isScope, joinScopes, splitScope } from './scopes.ts';

// The metadata a client registers (RFC 7591 2), checked: each field's rule, the defaults of 2
// (token_endpoint_auth_method client_secret_basic, grant_types [authorization_code], response_types
// [code]), and unknown fields dropped. The contract has already checked the types and lengths.

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];

/** The metadata as sent (openapi.yaml ClientRegistrationRequest). */
export interface ClientMetadataInput {
  client_id?: string;
  redirect_uris?: string[];
  token_endpoint_auth_method?: string;
  grant_types?: string[];
  response_types?: string[];
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  scope?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
  id_token_signed_response_alg?: string;
}

/** The metadata as registered: what is stored in its columns, and the rest (`extra`) as JSON. */
export interface ClientMetadata {
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  idTokenAlg: string;
  extra: {
    grant_types: string[];
    response_types: string[];
    client_uri?: string;
    logo_uri?: string;
    scope?: string;
    contacts?: string[];
    software_id?: string;
    software_version?: string;
  };
}

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/**
 * Why `uri` cannot be a redirect URI, or null: https (RFC 9700 2.1; no fragment, RFC 6749 3.1.2),
 * http on a loopback host (RFC 8252 7.3), or a private-use scheme in reverse-domain form (RFC 8252
 * 7.1: it contains a dot); never userinfo or a wildcard.
 */
export function redirectUriProblem(uri: string): string | null {
  const url = parse(uri);
  if (!url) return `${JSON.stringify(uri)} is not an absolute URI.`;
  if (uri.includes('#')) return `${uri} has a fragment (RFC 6749 3.1.2).`;
  if (uri.includes('*')) return `${uri} has a wildcard; register each URI in full.`;
  if (url.username || url.password) return `${uri} has userinfo.`;
  if (url.protocol === 'https:') return url.hostname ? null : `${uri} has no host.`;
  if (url.protocol === 'http:')
    return isLoopbackHttp(url) ? null : 'http is allowed only on a loopback host (127.0.0.1, [::1], localhost).';
  const scheme = url.protocol.slice(0, -1);
  return scheme.includes('.')
    ? null
    : `${uri}: a private-use scheme must be a reverse domain name with a dot, such as com.example.app (RFC 8252 7.1).`;
}

function checkHttpsUri(field: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const url = parse(value);
  if (!url || url.protocol !== 'https:' || url.username || url.password)
    throw invalidClientMetadata(`${field} must be an https URL.`);
  return value;
}

function checkGrants(input: ClientMetadataInput): { grant_types: string[]; response_types: string[] } {
  const grant_types = [...new Set(input.grant_types ?? [CODE_GRANT])];
  const unknown = grant_types.filter((g) => !PUBLIC_CLIENT_GRANT_TYPES.includes(g));
  if (unknown.length || !grant_types.length)
    throw invalidClientMetadata(`grant_types may hold ${PUBLIC_CLIENT_GRANT_TYPES.join(', ')}.`);
  const codeFlow = grant_types.includes(CODE_GRANT);
  const response_types = [...new Set(input.response_types ?? (codeFlow ? ['code'] : []))];
  if (response_types.some((r) => r !== 'code')) throw invalidClientMetadata('response_types may hold only code.');
  // RFC 7591 2.1: response_type code goes with the code grant, and the reverse.
  if (codeFlow !== response_types.includes('code'))
    throw invalidClientMetadata('response_types [code] goes with grant_types authorization_code, and only with it.');
  return { grant_types, response_types };
}

function checkRedirectUris(uris: string[] | undefined, codeFlow: boolean): string[] {
  const list = [...new Set(uris ?? [])];
  if (codeFlow && !list.length) throw invalidRedirectUriMetadata('redirect_uris is required for authorization_code.');
  for (const uri of list) {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalidRedirectUriMetadata(`redirect_uris: ${problem}`);
  }
  return list;
}

function checkScope(scope: string | undefined): string | undefined {
  if (scope === undefined) return undefined;
  const scopes = splitScope(scope);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw invalidClientMetadata(`scope: this server does not offer ${unknown.join(' ')}.`);
  return joinScopes(scopes);
}

function checkAuthMethod(method: string | undefined): TokenEndpointAuthMethod {
  const value = method ?? 'client_secret_basic';
  if (!(AUTH_METHODS as readonly string[]).includes(value))
    throw invalidClientMetadata(`token_endpoint_auth_method must be ${AUTH_METHODS.join(', ')}.`);
  return value as TokenEndpointAuthMethod;
}

function checkIdTokenAlg(alg: string | undefined): string {
  const value = alg ?? DEFAULT_ID_TOKEN_ALG;
  if (!(ID_TOKEN_ALGS as readonly string[]).includes(value))
    throw invalidClientMetadata(`id_token_signed_response_alg must be ${ID_TOKEN_ALGS.join(' or ')}.`);
  return value;
}

/** The registered metadata of `input`, or invalid_client_metadata / invalid_redirect_uri (RFC 7591 3.2.2). */
export function checkClientMetadata(input: ClientMetadataInput): ClientMetadata {
  const grants = checkGrants(input);
  const redirectUris = checkRedirectUris(input.redirect_uris, grants.grant_types.includes(CODE_GRANT));
  const name = (input.client_name ?? '').trim();
  const optional = {
    client_uri: checkHttpsUri('client_uri', input.client_uri),
    logo_uri: checkHttpsUri('logo_uri', input.logo_uri),
    scope: checkScope(input.scope),
    contacts: input.contacts,
    software_id: input.software_id,
    software_version: input.software_version,
  };
  return {
    name: name || 'Unnamed client',
    redirectUris,
    tokenEndpointAuthMethod: checkAuthMethod(input.token_endpoint_auth_method),
    idTokenAlg: checkIdTokenAlg(input.id_token_signed_response_alg),
    extra: {
      ...grants,
      ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    },
  };
}
