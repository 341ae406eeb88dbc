import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { DPOP_ALGS } from '../shared/dpopErrors.ts';
import { SIGNING_ALGS } from '../open/signingKeys.ts';
import { SUPPORTED_SCOPES } from './scopes.ts';
import { GRANT_TYPES, grantsMetadata } from './grants/registry.ts';
import { PROTECTED_RESOURCES, resourceIdentifier, type ProtectedResource } from '../http/protectedResources.ts';

type Metadata = components['schemas']['AuthorizationServerMetadata'];
type OpenIdConfiguration = components['schemas']['OpenIdConfiguration'];
type ResourceMetadata = components['schemas']['ProtectedResourceMetadata'];

/** Whether the operator takes client registrations (RFC 7591): then both documents name the endpoint. */
interface MetadataOptions {
  registration?: boolean;
  /** Whether an https URL on an allowed host may be a client_id (Client ID Metadata Documents). */
  metadataDocuments?: boolean;
}

/** RFC 8414 2; the grant types, and the endpoints they bring, are the grant registry's (grants/registry.ts). */
function authorizationServerMetadata(base: string, options: MetadataOptions = {}): Metadata {
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/api/open/oauth/token`,
    revocation_endpoint: `${base}/api/open/oauth/revoke`,
    // RFC 7662, authenticated as the token endpoint (RFC 8414 2).
    introspection_endpoint: `${base}/api/open/oauth/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    jwks_uri: `${base}/.well-known/jwks.json`,
    userinfo_endpoint: `${base}/api/open/v1/userinfo`,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: [...GRANT_TYPES],
    // `none`: public clients, which authenticate with their client_id alone (RFC 7591 2).
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    // RFC 9126 5: an application may require pushed requests; the server as a whole does not.
    pushed_authorization_request_endpoint: `${base}/api/open/oauth/par`,
    require_pushed_authorization_requests: false,
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    ...grantsMetadata(base),
    ...(options.registration ? { registration_endpoint: `${base}/api/open/oauth/register` } : {}),
    // draft-ietf-oauth-client-id-metadata-document: only said when the operator allows some hosts.
    ...(options.metadataDocuments ? { client_id_metadata_document_supported: true } : {}),
  };
}

/**
 * OpenID Connect Discovery 1.0 (3): RFC 8414's metadata and what an OpenID Connect client checks
 * an ID token against. The request_uri default is true, so its absence is said outright.
 */
function openIdConfiguration(base: string, options: MetadataOptions = {}): OpenIdConfiguration {
  return {
    ...authorizationServerMetadata(base, options),
    jwks_uri: `${base}/.well-known/jwks.json`,
    response_modes_supported: ['query'],
    subject_types_supported: ['public'],
    // RS256 first: the default, which Discovery 1.0 (3) requires; ES256 for clients that registered it.
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    claims_supported: [
      'iss',
      'sub',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'at_hash',
      'id',
      'login',
      'name',
      'avatar_url',
    ],
    prompt_values_supported: ['none', 'login', 'consent'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

const metadataOptions = (ctx: AppContext): MetadataOptions => ({
  registration: ctx.config.CLIENT_REGISTRATION !== 'off',
  metadataDocuments: ctx.config.CLIENT_ID_METADATA_DOCUMENT_HOSTS.length > 0,
});

/** GET /.well-known/oauth-authorization-server (RFC 8414 2): what a client library needs. */
export function getAuthorizationServerMetadata(ctx: AppContext): RequestHandler {
  const metadata = authorizationServerMetadata(ctx.config.BASE_URL, metadataOptions(ctx));
  return (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(metadata);
  };
}

/** GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0, 4). */
export function getOpenIdConfiguration(ctx: AppContext): RequestHandler {
  const metadata = openIdConfiguration(ctx.config.BASE_URL, metadataOptions(ctx));
  return (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(metadata);
  };
}

/**
 * RFC 9728 2-3: a protected resource's metadata, at `/.well-known/oauth-protected-resource` with
 * its path appended (3.1), so `resource` is exactly the identifier a client derives from that URL
 * (3.3). One authorization server, this one, for every resource.
 */
function protectedResourceMetadata(base: string, resource: ProtectedResource): ResourceMetadata {
  return {
    resource: resourceIdentifier(base, resource),
    authorization_servers: [base],
    scopes_supported: [...resource.scopes],
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    resource_name: resource.name,
    resource_documentation: `${base}/docs`,
  };
}

/** GET /.well-known/oauth-protected-resource{path} (RFC 9728 3.1), cacheable as the authorization server's metadata. */
export function getProtectedResourceMetadata(ctx: AppContext, path: ProtectedResource['path']): RequestHandler {
  const resource = PROTECTED_RESOURCES.find((r) => r.path === path)!;
  const metadata = protectedResourceMetadata(ctx.config.BASE_URL, resource);
  return (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(metadata);
  };
}
