import type { Request, RequestHandler } from 'express';
import type { AppContext } from '../context.ts';
import { invalidClient, twoClientCredentials } from '../shared/errors.ts';
import { hashToken } from '../shared/crypto.ts';
import { basicCredentials } from './clientAuth.ts';
import { authenticateClient } from './clients.ts';
import { findTokenByAccessHash, findTokenByRefreshHash, revokeApplicationForUser } from './store.ts';

/** Client credentials from HTTP Basic or the form body (RFC 6749 2.3.1), never both. */
function clientCredentials(req: Request): { clientId: string; clientSecret: string; basic: boolean } {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const basic = basicCredentials(req);
  if (basic === null) throw invalidClient(true);
  if (basic) {
    if (body.client_id !== undefined || body.client_secret !== undefined) {
      throw twoClientCredentials();
    }
    return { ...basic, basic: true };
  }
  if (typeof body.client_id !== 'string' || typeof body.client_secret !== 'string') throw invalidClient(false);
  return { clientId: body.client_id, clientSecret: body.client_secret, basic: false };
}

/**
 * POST /api/open/oauth/revoke (RFC 7009). Revoking either token of a pair revokes the user's whole
 * grant to the application. Unknown or foreign tokens answer 200 as well (2.2).
 */
export function revokeHandler(ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const credentials = clientCredentials(req);
    const client = await authenticateClient(ctx.db, credentials.clientId, credentials.clientSecret);
    if (!client) throw invalidClient(credentials.basic);
    const { token, token_type_hint: hint } = req.body as { token: string; token_type_hint?: string };
    const hash = hashToken(token);
    const lookups = hint === 'refresh_token' ? [findTokenByRefreshHash, findTokenByAccessHash] : [findTokenByAccessHash, findTokenByRefreshHash];
    for (const find of lookups) {
      const row = await find(ctx.db, hash);
      if (!row) continue;
      if (row.applicationId === client.id) await revokeApplicationForUser(ctx.db, row.userId, row.applicationId, Date.now());
      break;
    }
    res.set('Cache-Control', 'no-store').status(200).end();
  };
}
