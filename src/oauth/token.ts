import OAuth2Server from '@node-oauth/oauth2-server';
import type { Request, RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { OAuthError, type OAuthErrorCode } from '../shared/errors.ts';
import { basicCredentials } from './clientAuth.ts';
import { createModel, exchangeContext } from './model.ts';
import { hashToken } from '../shared/crypto.ts';

// POST /api/open/oauth/token (RFC 6749 4.1.3, 6): authorization_code and refresh_token grants on
// @node-oauth/oauth2-server; the grant rules live in model.ts.

const KNOWN_CODES = new Set<string>([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/** Did the client try HTTP Basic? Then invalid_client carries a Basic challenge (RFC 6749 5.2). */
function usedBasic(req: Request): boolean {
  return /^Basic /i.test(req.headers.authorization ?? '');
}

function toOAuthError(err: unknown, req: Request): OAuthError | unknown {
  if (!(err instanceof OAuth2Server.OAuthError)) return err;
  const name = err.name;
  if (name === 'invalid_client') {
    // 401 whatever the method; the challenge only when Basic was used (RFC 6749 5.2).
    const headers: Record<string, string> = usedBasic(req) ? { 'WWW-Authenticate': 'Basic realm="token"' } : {};
    return new OAuthError('invalid_client', 'Client authentication failed.', 401, headers);
  }
  if (name === 'server_error' || !KNOWN_CODES.has(name)) return (err as { inner?: unknown }).inner ?? err;
  return new OAuthError(name as OAuthErrorCode, err.message, 400);
}

export function tokenHandler(ctx: AppContext): RequestHandler {
  const server = new OAuth2Server({
    model: createModel(ctx),
    accessTokenLifetime: ctx.config.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenLifetime: ctx.config.REFRESH_TOKEN_TTL_SECONDS,
    allowEmptyState: true,
    alwaysIssueNewRefreshToken: true,
    enablePlainPKCE: false,
  } as OAuth2Server.ServerOptions);

  return async (req, res, next) => {
    const basic = basicCredentials(req);
    if (basic) {
      // The library does not form-decode Basic credentials (RFC 6749 2.3.1); hand it decoded ones.
      req.headers.authorization = `Basic ${Buffer.from(`${basic.clientId}:${basic.clientSecret}`).toString('base64')}`;
    }
    const request = new OAuth2Server.Request(req);
    const response = new OAuth2Server.Response(res);
    const form = req.body as Record<string, unknown>;
    const secret = (name: string) => (typeof form[name] === 'string' && form[name] ? hashToken(form[name]) : undefined);
    const exchange = {
      db: ctx.db,
      codeHash: form.grant_type === 'authorization_code' ? secret('code') : undefined,
      refreshHash: form.grant_type === 'refresh_token' ? secret('refresh_token') : undefined,
    };
    try {
      await exchangeContext.run(exchange, () => server.token(request, response));
    } catch (err) {
      next(toOAuthError(err, req));
      return;
    }
    const body = response.body as Record<string, unknown>;
    // The library derives expires_in from the stored expiry, rounding 7200 down to 7199.
    body.expires_in = ctx.config.ACCESS_TOKEN_TTL_SECONDS;
    res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache').status(200).json(body);
  };
}
