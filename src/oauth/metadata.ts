import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import type { components } from '../../generated/api.d.ts';
import { SUPPORTED_SCOPES } from './scopes.ts';

type Metadata = components['schemas']['AuthorizationServerMetadata'];

/** GET /.well-known/oauth-authorization-server (RFC 8414 2): what a client library needs. */
export function getAuthorizationServerMetadata(ctx: AppContext): RequestHandler {
  const base = ctx.config.BASE_URL;
  const metadata: Metadata = {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/api/open/oauth/token`,
    revocation_endpoint: `${base}/api/open/oauth/revoke`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    userinfo_endpoint: `${base}/api/open/v1/userinfo`,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
  return (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(metadata);
  };
}
