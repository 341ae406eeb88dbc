// panva/oidc-provider with its in-memory adapter (bench/peer.ts), one fresh process per load: its
// in-memory adapter keeps only the last 1,000 entries.
import { once } from 'node:events';
import { freePort } from '../../test/support/processes.ts';
import { spawnNode } from '../processes.ts';
import { peerInstance, type MintedTokens, type OAuthPeer, type OAuthPeerInstance } from './types.ts';

async function start(connections: number): Promise<OAuthPeerInstance> {
  const child = spawnNode(['bench/peer.ts', String(await freePort()), String(connections)], {
    env: { ...process.env, NODE_ENV: 'production' },
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const minted = await new Promise<MintedTokens>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as MintedTokens);
    });
    child.once('exit', (code) => reject(new Error(`the peer exited with ${code}: ${err}`)));
  });
  return peerInstance(minted, [child.pid!], async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  });
}

export const oidcProvider: OAuthPeer = {
  name: 'oidc-provider (memory)',
  targets: { refresh: '≥ 1.2x', userinfo: '≥ 1.6x' },
  start,
};
