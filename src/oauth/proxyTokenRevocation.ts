import type { AppContext } from '../context.ts';
import type { OAuthClient } from './clients.ts';
import { revokeApplicationForUser } from './authorizations.store.ts';
import { revocationLease } from '../shared/principalLease.ts';
import { verifyProxyToken } from '../open/proxyTokens.ts';

/**
 * RFC 7009 for a proxy token (token detail's JWT), presented at /api/open/oauth/revoke by the
 * client it was issued to: revokes the user's grant to that client, the authorization the token
 * stands on, as revoking the OAuth access token it was fetched with does (RFC 7009 2.1 lets a
 * server revoke what a token was issued under). The gateway reads that authorization for every
 * proxy token (proxyTokenAuth.ts), so the token, and every other one issued under the grant, is
 * refused once the principal lease has run out, which this waits for before it answers.
 *
 * Why not a list of revoked `jti`s kept until their `exp`: the gateway would read it on every
 * call, for tokens that live 30 minutes; a leaked proxy token means the app's token store leaked,
 * and then its OAuth tokens are suspect too. A token that does not verify (expired, forged, another
 * issuer's) stands on nothing; another client's is left alone (2.1: the token must have been issued
 * to the client making the request). Both answer 200 like any unknown token (2.2).
 */
export async function revokeProxyToken(
  ctx: AppContext,
  client: Pick<OAuthClient, 'id' | 'clientId'>,
  token: string,
): Promise<void> {
  const claims = await verifyProxyToken(ctx, token);
  if (!claims || claims.clientId !== client.clientId) return;
  if (await revokeApplicationForUser(ctx.db, claims.userId, client.id, Date.now())) await revocationLease.settle();
}
