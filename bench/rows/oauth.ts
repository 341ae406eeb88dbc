// Rows 1-3: the token endpoint and user info. Rows 1 and 3 run the same load against each peer of
// the list (bench/peers/), each peer's row showing ours ÷ it.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { Bench, RowGroup } from '../bench.ts';
import { exchange, mintCodes, REDIRECT_URI } from '../oauthFlow.ts';
import { PKCE } from '../../test/support/oauthFlow.ts';
import type { OAuthPeer, OAuthPeerInstance } from '../peers/types.ts';
import type { LoadResult } from '../types.ts';
import { wrkMissing } from '../wrk.ts';

/** How a row's load is sent: by the bench's own generator (bench/load.ts) or by wrk (bench/wrk.ts). */
type Generator = 'bench' | 'wrk';

/** A row's name for a generator: wrk's rows say so (unique per row: --repeat matches rows by name). */
const named = (name: string, generator: Generator) => (generator === 'wrk' ? `${name}, wrk` : name);

/** Each peer in turn, fresh, on the load `measure` sends to it; its row divides `ours` by it. */
async function peerRows(
  bench: Bench,
  peers: OAuthPeer[],
  ours: LoadResult,
  row: 'refresh' | 'userinfo',
  generator: Generator,
  measure: (p: OAuthPeerInstance) => Promise<LoadResult>,
): Promise<void> {
  for (const peer of peers) {
    const name = named(`   peer: ${peer.name}, ${row}`, generator);
    const started = await peer.start(bench.options.connections);
    if (typeof started === 'string') {
      bench.record(name, started, { target: peer.targets[row] });
      continue;
    }
    try {
      const theirs = await measure(started);
      bench.record(name, theirs, { ratio: ours.rps / theirs.rps, target: peer.targets[row] });
    } finally {
      await started.stop();
    }
  }
}

/** `connections` fresh refresh tokens of the bench user, one per chain (each through the real code flow). */
async function freshRefreshTokens(bench: Bench): Promise<string[]> {
  const { baseUrl } = bench.service;
  const { user, options } = bench;
  const codes = await mintCodes(user.browser, user.app.client_id, user.scope, options.connections);
  return Promise.all(codes.map(async (c) => (await exchange(baseUrl, user.clientAuth, c)).refresh_token));
}

/**
 * Rows 1 and 3 again with wrk, for ours and for the peers that have wrk rows (oidc-provider: the
 * goal a single generator could flatter), so a gain that one client alone shows is visible.
 */
async function wrkRows(bench: Bench, peers: OAuthPeer[], row: 'refresh' | 'userinfo'): Promise<void> {
  const { baseUrl } = bench.service;
  const { user, common } = bench;
  const ourName = row === 'refresh' ? '1w. refresh grant (rotation), wrk' : '3w. GET userinfo, wrk';
  const missing = wrkMissing();
  if (missing) {
    bench.record(ourName, missing);
    return;
  }
  const ours =
    row === 'refresh'
      ? await bench.wrk({
          kind: 'refresh',
          ...common,
          url: `${baseUrl}/api/open/oauth/token`,
          authorization: user.clientAuth,
          refreshTokens: await freshRefreshTokens(bench),
        })
      : await bench.wrk({
          kind: 'fixed',
          ...common,
          url: `${baseUrl}/api/open/v1/userinfo`,
          headers: { authorization: `Bearer ${user.bearer}` },
        });
  bench.record(ourName, ours);
  await peerRows(bench, peers, ours, row, 'wrk', (p) =>
    bench.wrk(
      row === 'refresh'
        ? { kind: 'refresh', ...common, ...p.refresh }
        : { kind: 'fixed', ...common, url: p.userinfo.url, headers: p.userinfo.headers },
      { peerPids: p.pids },
    ),
  );
}

/** A code exchanged with a DPoP proof: an access token bound to a new ES256 key, and that key. */
async function dpopBoundToken(bench: Bench) {
  const { baseUrl } = bench.service;
  const { user } = bench;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const [code] = await mintCodes(user.browser, user.app.client_id, user.scope, 1);
  const tokenUrl = `${baseUrl}/api/open/oauth/token`;
  const proof = await new SignJWT({ htm: 'POST', htu: tokenUrl, jti: randomUUID() })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk })
    .setIssuedAt()
    .sign(privateKey);
  const { access_token, token_type } = await exchange(baseUrl, user.clientAuth, code!, { dpop: proof });
  if (token_type !== 'DPoP') throw new Error(`expected a DPoP-bound token, got token_type ${token_type}`);
  return { accessToken: access_token, privateJwk: await exportJWK(privateKey), publicJwk };
}

/** `peers`: the OAuth peers of rows 1 and 3; `wrkPeers`: those also measured with wrk. */
export function oauthRows(peers: OAuthPeer[], wrkPeers: OAuthPeer[]): RowGroup {
  return {
    ids: ['1', '2', '3', '3d'],
    async run(bench) {
      const { baseUrl } = bench.service;
      const { user, common, options } = bench;
      const tokenUrl = `${baseUrl}/api/open/oauth/token`;

      // 1. Refresh grant with rotation: each chain sends the refresh token it was just given.
      if (options.wanted('1')) {
        const refreshTokens = await Promise.all(
          user.chainCodes.map(async (c) => (await exchange(baseUrl, user.clientAuth, c)).refresh_token),
        );
        const ours = await bench.load({
          kind: 'refresh',
          ...common,
          url: tokenUrl,
          authorization: user.clientAuth,
          refreshTokens,
        });
        bench.record('1. refresh grant (rotation)', ours);
        await peerRows(bench, peers, ours, 'refresh', 'bench', (p) =>
          bench.load({ kind: 'refresh', ...common, ...p.refresh }, { peerPids: p.pids }),
        );
        await wrkRows(bench, wrkPeers, 'refresh');
      }

      // 2. Code exchange: codes minted beforehand (they live 300 s); enough for the duration at the
      // refresh grant's pace three times over, at most 30,000.
      if (options.wanted('2')) {
        const pace = bench.rows.find('1.')?.result;
        const count = Math.min(
          30_000,
          Math.ceil((typeof pace === 'object' ? pace.rps : 1500) * common.durationSeconds * 3),
        );
        const t0 = performance.now();
        const codes = await mintCodes(user.browser, user.app.client_id, user.scope, count);
        console.error(`  minted ${codes.length} codes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        bench.record(
          '2. code exchange',
          await bench.load({
            kind: 'codes',
            ...common,
            url: tokenUrl,
            authorization: user.clientAuth,
            redirectUri: REDIRECT_URI,
            codeVerifier: PKCE.verifier,
            codes,
          }),
        );
      }

      // 3. User info.
      if (options.wanted('3')) {
        const ours = await bench.load({
          kind: 'fixed',
          ...common,
          url: `${baseUrl}/api/open/v1/userinfo`,
          method: 'GET',
          headers: { authorization: `Bearer ${user.bearer}` },
        });
        bench.record('3. GET userinfo', ours);
        await peerRows(bench, peers, ours, 'userinfo', 'bench', (p) =>
          bench.load(
            { kind: 'fixed', ...common, url: p.userinfo.url, method: 'GET', headers: p.userinfo.headers },
            { peerPids: p.pids },
          ),
        );
        await wrkRows(bench, wrkPeers, 'userinfo');
      }

      // 3d. User info with a DPoP-bound token (RFC 9449): a proof checked, and recorded against
      // replay in the store, on every request. No peer row: the peers' rows are bearer.
      if (options.wanted('3d')) {
        const url = `${baseUrl}/api/open/v1/userinfo`;
        const { accessToken, privateJwk, publicJwk } = await dpopBoundToken(bench);
        bench.record(
          '3d. GET userinfo (DPoP-bound)',
          await bench.load({ kind: 'dpop', ...common, url, accessToken, privateJwk, publicJwk }),
        );
      }
    },
  };
}
