// Replay of an authorization code (RFC 6749 4.1.2, RFC 9700 4.2.4), whatever the interleaving of
// the two exchanges: every token issued from the code (access, refresh, and the proxy tokens minted
// through the grant) is refused afterwards. The interleavings are forced, not left to chance: the
// store's consumption of the code and its insertion of tokens wait at gates the test opens.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../client/src/index.ts';
import { createAccessToken } from '../accounts/accessTokens.ts';
import { hashToken } from '../shared/crypto.ts';
import { testDialects } from '../../test/support/db.ts';
import {
  Browser,
  createFixture,
  discover,
  formFields,
  logIn,
  PKCE,
  withPkce,
  type Fixture,
} from '../../test/support/oauthFlow.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import type * as StoreModule from './store.ts';

/** Gates in front of two store functions; null lets calls through at once. */
const gates = vi.hoisted(() => ({
  beforeMarkCodeUsed: null as null | (() => Promise<void>),
  beforeInsertToken: null as null | (() => Promise<void>),
}));

vi.mock('./store.ts', async (importOriginal) => {
  const real = await importOriginal<typeof StoreModule>();
  return {
    ...real,
    markCodeUsed: async (...args: Parameters<typeof real.markCodeUsed>) => {
      await gates.beforeMarkCodeUsed?.();
      return real.markCodeUsed(...args);
    },
    insertToken: async (...args: Parameters<typeof real.insertToken>) => {
      await gates.beforeInsertToken?.();
      return real.insertToken(...args);
    },
  };
});

/** A promise with its resolve, to open a gate from outside. */
function latch(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe.each(testDialects())('authorization code replay, every interleaving (%s)', (dialect) => {
  let server: TestServer;
  let tokenEndpoint: string;
  let authorizationEndpoint: string;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const as = await discover(server.baseUrl);
    tokenEndpoint = as.token_endpoint!;
    authorizationEndpoint = as.authorization_endpoint!;
  });
  afterAll(async () => {
    gates.beforeMarkCodeUsed = null;
    gates.beforeInsertToken = null;
    await server?.close();
  });

  /** A fresh user and app, the user's raw token, and one authorization code (user_info api_key) not yet exchanged. */
  async function aCode(): Promise<{ f: Fixture; code: string; rawTokenId: number }> {
    const f = await createFixture(server.ctx.db);
    const raw = await createAccessToken(server.ctx, {
      userId: f.userId,
      namespace: f.login,
      name: 'key',
      usageScenario: 'paid',
    });
    const browser = new Browser(server.baseUrl);
    expect((await logIn(browser, f.login, f.password)).status).toBe(303);
    const url = new URL(authorizationEndpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: f.clientId,
      redirect_uri: f.redirectUri,
      scope: 'user_info api_key',
      state: 's',
    }).toString();
    const consent = await browser.fetch(withPkce(url).toString());
    const answer = await browser.post('/oauth/authorize/decision', {
      ...formFields(await consent.text()),
      decision: 'allow',
    });
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
    return { f, code, rawTokenId: raw.record.id };
  }

  const exchange = async (f: Fixture, code: string) => {
    const res = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: f.redirectUri,
        code_verifier: PKCE.verifier,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { access_token?: string; refresh_token?: string; error?: string },
    };
  };
  const refresh = async (f: Fixture, refreshToken: string) =>
    (
      await fetch(tokenEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: f.clientId,
          client_secret: f.clientSecret,
        }),
      })
    ).status;
  const userinfo = async (accessToken: string) =>
    (await fetch(`${server.baseUrl}/api/open/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }))
      .status;
  /** A proxy token minted through the grant (token detail endpoint), or null when refused. */
  const proxyToken = async (accessToken: string, f: Fixture, rawTokenId: number) => {
    const { data } = await createApiClient(server.baseUrl, { bearer: accessToken }).GET(
      '/api/open/v1/{namespace}/tokens/{id}',
      {
        params: { path: { namespace: f.login, id: rawTokenId } },
      },
    );
    return data?.proxy_access_token ?? null;
  };
  const gateway = async (bearer: string) =>
    (
      await createApiClient(server.baseUrl, { bearer }).POST('/serverless/v1/chat/completions', {
        body: { model: 'echo', messages: [{ role: 'user', content: 'hi' }] },
      })
    ).response.status;

  /** After the replay: every token the code led to is refused. */
  async function expectAllRefused(
    tokens: { access_token?: string; refresh_token?: string },
    proxy: string | null,
    f: Fixture,
    rawTokenId: number,
  ) {
    expect(await userinfo(tokens.access_token!)).toBe(401);
    expect(await refresh(f, tokens.refresh_token!)).toBe(400);
    expect(await proxyToken(tokens.access_token!, f, rawTokenId)).toBeNull();
    if (proxy) expect(await gateway(proxy)).toBe(401);
  }

  it('two exchanges that both read the code unused: the one that loses the consumption revokes, before the winner stores its tokens', async () => {
    const { f, code, rawTokenId } = await aCode();
    // Both exchanges reach the consumption before either makes it.
    const bothThere = latch();
    let arrived = 0;
    gates.beforeMarkCodeUsed = async () => {
      if (++arrived === 2) bothThere.open();
      await bothThere.promise;
    };
    // The winner stores its tokens only once the loser has answered (and so has revoked).
    const loserAnswered = latch();
    gates.beforeInsertToken = () => loserAnswered.promise;
    const first = exchange(f, code);
    const second = exchange(f, code);
    const loser = await Promise.race([first, second]);
    expect(loser).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    loserAnswered.open();
    const winner = (await Promise.all([first, second])).find((r) => r !== loser)!;
    gates.beforeMarkCodeUsed = null;
    gates.beforeInsertToken = null;
    // The winner may be answered tokens, but they were issued under a revoked grant: all refused.
    if (winner.status === 200) await expectAllRefused(winner.body, null, f, rawTokenId);
    else expect(winner.body.error).toBe('invalid_grant');
  });

  it('a replay that finds the code already consumed, while the first exchange has not stored its tokens yet', async () => {
    const { f, code, rawTokenId } = await aCode();
    const replayAnswered = latch();
    gates.beforeInsertToken = () => replayAnswered.promise;
    const first = exchange(f, code);
    // The first exchange has consumed the code and waits before storing its tokens: replay now.
    const consumed = async () =>
      (
        await server.ctx
          .db('oauth_codes')
          .where({ code_hash: hashToken(code) })
          .first('used_at')
      ).used_at !== null;
    await vi.waitFor(async () => expect(await consumed()).toBe(true));
    gates.beforeInsertToken = null;
    const replay = await exchange(f, code);
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    replayAnswered.open();
    const winner = await first;
    if (winner.status === 200) await expectAllRefused(winner.body, null, f, rawTokenId);
  });

  it('a replay after the first exchange completed and its tokens (and a proxy token) were in use', async () => {
    const { f, code, rawTokenId } = await aCode();
    const winner = await exchange(f, code);
    expect(winner.status).toBe(200);
    expect(await userinfo(winner.body.access_token!)).toBe(200);
    const proxy = await proxyToken(winner.body.access_token!, f, rawTokenId);
    expect(proxy).toBeTruthy();
    expect(await gateway(proxy!)).toBe(200);
    const replay = await exchange(f, code);
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await expectAllRefused(winner.body, proxy, f, rawTokenId);
  });

  it("a replay also kills the tokens a refresh of the code's tokens issued", async () => {
    const { f, code, rawTokenId } = await aCode();
    const winner = await exchange(f, code);
    const refreshed = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: winner.body.refresh_token!,
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });
    const pair = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect(refreshed.status).toBe(200);
    const proxy = await proxyToken(pair.access_token, f, rawTokenId);
    expect(await gateway(proxy!)).toBe(200);
    expect((await exchange(f, code)).status).toBe(400);
    await expectAllRefused(pair, proxy, f, rawTokenId);
  });
});
