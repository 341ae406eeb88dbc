import type { RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { hashToken } from '../shared/crypto.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { looksLikeJwt } from '../open/proxyTokenAuth.ts';
import { revokeProxyToken } from './proxyTokenRevocation.ts';
import { lookupOrder } from './revocationHint.ts';
import { authenticatedClient } from './clients.ts';
import { revokeApplicationForUser } from './authorizations.store.ts';
import { findTokenByAccessHash, findTokenByRefreshHash } from './store.ts';

/**
 * POST /api/open/oauth/revoke (RFC 7009). Revoking either token of a pair, or a proxy token, revokes
 * the user's whole grant to the application. Unknown or foreign tokens answer 200 as well (2.2).
 */
export function revokeToken(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const client = await authenticatedClient(ctx, req);
    const { token, token_type_hint: hint } = req.body as { token: string; token_type_hint?: string };
    // A proxy token (a JWT; our OAuth tokens are opaque): revoked through the grant it stands on.
    const proxyToken = looksLikeJwt(token);
    if (proxyToken) await revokeProxyToken(ctx, client, token);
    const hash = hashToken(token);
    const finders = { access_token: findTokenByAccessHash, refresh_token: findTokenByRefreshHash };
    const lookups = proxyToken ? [] : lookupOrder(hint).map((type) => finders[type]);
    for (const find of lookups) {
      const row = await find(ctx.db, hash);
      if (!row) continue;
      if (row.applicationId === client.id) {
        await revokeApplicationForUser(ctx.db, row.userId, row.applicationId, Date.now());
        await revocationLease.settle(); // answer once no process honours the tokens
      }
      break;
    }
    // A JSON body (`{}`), not an empty one: client libraries parse every token-endpoint answer as JSON.
    res.set('Cache-Control', 'no-store').status(200).json({});
  };
}
