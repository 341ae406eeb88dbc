// What the refresh-token tests share: a refresh at the token endpoint as a confidential client, a
// user-info call with an access token, a fresh grant (a user's consent and a code exchanged), and
// the heads of a grant's live chains as the store has them.
import type { Knex } from 'knex';
import { hashToken } from '../../src/shared/crypto.ts';
import { createFixture, discover, obtainTokens, type Fixture } from './oauthFlow.ts';
import type { TestServer } from './server.ts';

export interface RefreshAnswer {
  status: number;
  retryAfter: string | null;
  body: { access_token?: string; refresh_token?: string; id_token?: string; error?: string };
}

/** A refresh of `token` by the fixture's client; `signal` aborts it as a client's timeout does (the server goes on with it). */
export async function refreshAt(
  baseUrl: string,
  f: Fixture,
  token: string,
  signal?: AbortSignal,
): Promise<RefreshAnswer> {
  const res = await fetch(`${baseUrl}/api/open/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: f.clientId,
      client_secret: f.clientSecret,
    }),
    ...(signal ? { signal } : {}),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as RefreshAnswer['body'],
  };
}

/** The status of GET userinfo with the access token: 200 while it is live. */
export async function userinfoStatus(baseUrl: string, accessToken: string): Promise<number> {
  return (await fetch(`${baseUrl}/api/open/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }))
    .status;
}

/** A new client and user, consent given and the code exchanged: its first pair and the rows it made. */
export async function freshGrant(server: TestServer) {
  const f = await createFixture(server.ctx.db);
  const { tokens } = await obtainTokens(server.baseUrl, await discover(server.baseUrl), f, 'user_info');
  const row = await server.ctx
    .db('oauth_tokens')
    .where({ refresh_token_hash: hashToken(tokens.refresh_token!) })
    .first('authorization_id', 'code_id');
  return {
    f,
    refreshToken: tokens.refresh_token!,
    accessToken: tokens.access_token,
    authorizationId: Number(row.authorization_id),
    codeId: Number(row.code_id),
  };
}

/** Refresh tokens of the grant that are neither revoked nor rotated: the heads of its live chains. */
export async function liveRefreshTokens(db: Knex, authorizationId: number): Promise<number> {
  const rows = await db('oauth_tokens as t')
    .where({ 't.authorization_id': authorizationId })
    .whereNull('t.revoked_at')
    .whereNotExists(db('oauth_tokens as s').whereRaw('s.rotated_from_id = t.id').select('s.id'))
    .select('t.id');
  return rows.length;
}
