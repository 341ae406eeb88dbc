import type OAuth2Server from '@node-oauth/oauth2-server';
import { invalidGrant, invalidRequest, invalidTarget } from '../../shared/errors.ts';
import { proxyTokenAudience } from '../../open/proxyTokens.ts';
import { issueProxyToken, type IssuanceRefusals } from '../../open/tokens.ts';
import { authenticateOAuthAccessToken } from '../accessTokenAuth.ts';
import type { Grant } from './grant.ts';
import { isVisibleAscii } from './form.ts';
import { ModelGrant } from './modelGrant.ts';

/** RFC 8693 3: the token type identifiers this exchange takes and issues. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/** The scope a subject token must carry: the one that lets an app read the user's namespace tokens. */
const SUBJECT_SCOPE = 'api_key';

/** A namespace token's detail URL, as openapi.yaml's getAccessToken path and parameters allow it. */
const TOKEN_DETAIL_PATH = /^\/api\/open\/v1\/([A-Za-z0-9][A-Za-z0-9-]{0,63})\/tokens\/([1-9][0-9]{0,9})$/;
const MAX_TOKEN_ID = 2147483647;

/**
 * The namespace token a `resource` names: `{BASE_URL}/api/open/v1/{namespace}/tokens/{id}`, exactly
 * (no query, no fragment), or null when it is anything else.
 */
export function tokenDetailTarget(baseUrl: string, resource: string): { namespace: string; id: number } | null {
  if (!resource.startsWith(`${baseUrl}/`)) return null;
  const match = TOKEN_DETAIL_PATH.exec(resource.slice(baseUrl.length));
  if (!match) return null;
  const id = Number(match[2]);
  return id <= MAX_TOKEN_ID ? { namespace: match[1]!, id } : null;
}

/** Issuance refusals in RFC 8693 2.2.2's words: the subject token's grant is gone, or the target is. */
const EXCHANGE_REFUSALS: IssuanceRefusals = {
  grantGone: () => invalidGrant('Invalid grant: subject_token is invalid, expired or revoked'),
  expired: () => invalidTarget('resource names a namespace token that has expired.'),
  notFound: () => invalidTarget("resource is not the token detail URL of one of the user's namespace tokens."),
};

/**
 * grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693) as an `extendedGrantTypes`
 * class of @node-oauth/oauth2-server: its TokenHandler has authenticated the client when `handle`
 * runs. The subject token is an access token of ours with scope `api_key`; the resource is one of
 * the user's namespace tokens; the answer is that token's proxy token, the very JWT that token
 * detail (GET /api/open/v1/{namespace}/tokens/{id}) issues, through the same issuance
 * (src/open/tokens.ts issueProxyToken), so the same lifetime and the same revocation hold. Nothing is
 * stored: the JWT stands on the subject token's grant, as token detail's does. The library builds
 * the answer from what `handle` returns (allowExtendedTokenAttributes): no refresh_token (RFC 8693
 * 2.2.1), `expires_in` and `issued_token_type` as extended attributes.
 */
export class TokenExchangeGrant extends ModelGrant {
  async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token> {
    const form = this.formOf(request);
    const ctx = this.model.ctx;

    // 1. The request's parameters (2.1); a type we do not take is invalid_request (2.2.2).
    if (!form.subject_token) throw invalidRequest('Missing parameter: `subject_token`');
    if (!isVisibleAscii(form.subject_token)) throw invalidRequest('Invalid parameter: `subject_token`');
    if (!form.subject_token_type) throw invalidRequest('Missing parameter: `subject_token_type`');
    if (form.subject_token_type !== ACCESS_TOKEN_TYPE)
      throw invalidRequest(`Unsupported subject_token_type: only ${ACCESS_TOKEN_TYPE} is accepted`);
    if (form.requested_token_type !== undefined && form.requested_token_type !== JWT_TOKEN_TYPE)
      throw invalidRequest(`Unsupported requested_token_type: only ${JWT_TOKEN_TYPE} is issued`);
    if (!form.resource) throw invalidRequest('Missing parameter: `resource`');

    // 2. The subject token: live, issued to this client, with the scope that reads namespace
    //    tokens. Read as every bearer of the open API is (the principal lease: a revocation that
    //    has answered is seen). Anything else is invalid_grant (RFC 6749 5.2), and says no more.
    const principal = await authenticateOAuthAccessToken(ctx, form.subject_token);
    if (!principal || principal.clientId !== client.id)
      throw invalidGrant('Invalid grant: subject_token is invalid, expired or revoked');
    if (!principal.scopes.includes(SUBJECT_SCOPE))
      throw invalidGrant(`Invalid grant: subject_token lacks the scope ${SUBJECT_SCOPE}`);
    // The proxy token stands in for token detail, an operation of the open API: a subject token
    //    issued for other resources only (RFC 8707) is no more use here than it would be there.
    const openApi = `${ctx.config.BASE_URL}/api/open`;
    if (principal.audience !== undefined && !principal.audience.includes(openApi))
      throw invalidGrant('Invalid grant: subject_token was issued for another resource');

    // 3. The target: one of the user's namespace tokens, by its detail URL; the only audience a
    //    proxy token has is the gateway's.
    const target = tokenDetailTarget(ctx.config.BASE_URL, form.resource);
    if (!target) throw invalidTarget("resource is not the token detail URL of one of the user's namespace tokens.");
    if (form.audience !== undefined && form.audience !== proxyTokenAudience(ctx))
      throw invalidTarget(`audience must be ${proxyTokenAudience(ctx)}, the only one this server issues for.`);

    // 4. Token detail's issuance, with its answers in RFC 8693's words.
    const detail = await issueProxyToken(ctx, principal, target.namespace, target.id, EXCHANGE_REFUSALS);
    return {
      accessToken: detail.proxy_access_token,
      client,
      user: { id: principal.userId },
      scope: principal.scopes,
      expires_in: detail.expires_in,
      issued_token_type: JWT_TOKEN_TYPE,
      // A bearer token at the gateway (RFC 6750), so not N_A (RFC 8693 2.2.1); DPoP when minted
      // from a bound subject token, whose key it carries (RFC 9449 6.1). The subject token's
      // binding is what counts: neither RFC 8693 nor RFC 9449 defines binding an exchanged token
      // to the key of the exchange request's own proof.
      token_type: principal.dpopJkt === undefined ? 'Bearer' : 'DPoP',
    };
  }
}

/** The registry's entry (registry.ts): RFC 8693, for a namespace token's proxy token. */
export const tokenExchange: Grant = {
  type: 'urn:ietf:params:oauth:grant-type:token-exchange',
  handler: TokenExchangeGrant,
  metricsLabel: 'token_exchange',
};
