// panva/oidc-provider with its in-memory adapter (bench/peer.ts), one fresh process per load: its
// in-memory adapter keeps only the last 1,000 entries.
import { once } from 'node:events';
import { freePort } from '../../test/support/processes.ts';
import { basic } from '../oauthFlow.ts';
import { spawnNode } from '../processes.ts';
import type { OAuthPeer, OAuthPeerInstance } from './types.ts';

interface Minted {
  tokenUrl: string;
  userinfoUrl: string;
  clientId: string;
  clientSecret: string;
  refreshTokens: string[];
  accessToken: string;
}

async function start(connections: number): Promise<OAuthPeerInstance> {
  const child = spawnNode(['bench/peer.ts', String(await freePort()), String(connections)], { env: { ...process.env, NODE_ENV: 'production' } });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const minted = await new Promise<Minted>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as Minted);
    });
    child.once('exit', (code) => reject(new Error(`the peer exited with ${code}: ${err}`)));
  });
  return {
    refresh: { url: minted.tokenUrl, authorization: basic(minted.clientId, minted.clientSecret), refreshTokens: minted.refreshTokens },
    userinfo: { url: minted.userinfoUrl, headers: { authorization: `Bearer ${minted.accessToken}` } },
    pids: [child.pid!],
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export const oidcProvider: OAuthPeer = {
  name: 'oidc-provider (memory)',
  targets: { refresh: '≥ 1.2x', userinfo: '≥ 1.6x' },
  start,
};
