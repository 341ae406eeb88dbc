import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { OAuthError, twoClientCredentials, unsupportedGrantType } from '../shared/errors.ts';
import { countTokenGrant } from '../ops/metrics.ts';
import { clientCredentials, type ClientCredentials } from './clientAuth.ts';
import { authorizationCodeGrant } from './grants/authorizationCode.ts';
import type { TokenForm } from './grants/form.ts';
import type { TokenResponse } from './grants/issue.ts';
import { refreshTokenGrant } from './grants/refreshToken.ts';

// POST /api/open/oauth/token (RFC 6749 3.2): one module per grant type under grants/, each reading
// top to bottom like its RFC section.

type Grant = (ctx: AppContext, form: TokenForm, credentials: ClientCredentials) => Promise<TokenResponse>;

const grants: Record<TokenForm['grant_type'], Grant> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
};

export function token(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const form = req.body as TokenForm;
    let tokens: TokenResponse;
    try {
      const credentials = clientCredentials(req);
      // RFC 6749 2.3: a client must not use more than one authentication method per request.
      if (credentials.secondMethod) throw twoClientCredentials();
      const grant = Object.hasOwn(grants, form.grant_type) ? grants[form.grant_type] : undefined;
      if (!grant) throw unsupportedGrantType();
      tokens = await grant(ctx, form, credentials);
    } catch (err) {
      countTokenGrant(form.grant_type, err instanceof OAuthError ? err.error : 'server_error');
      throw err;
    }
    countTokenGrant(form.grant_type, 'granted');
    // RFC 6749 5.1: the response must not be cached.
    res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache').status(200).json(tokens);
  };
}
