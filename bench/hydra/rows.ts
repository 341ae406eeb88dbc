// Hydra's side of loads 1 and 3: a Hydra started for the one load (fresh refresh chains, as the
// oidc-provider peer), the same load spec as ours (connections, duration, generator), or the one
// line saying why there is no Hydra figure. Never throws: the rest of the bench goes on.
import type { LoadResult, LoadSpec } from '../types.ts';
import { HYDRA_VERSION } from './config.ts';
import { hydraBinary, startHydra } from './peer.ts';

export interface HydraLoadContext {
  /** Maintenance URL of the bench's PostgreSQL cluster: Hydra gets a database of its own there. */
  pgAdminUrl: string;
  connections: number;
  durationSeconds: number;
  load(spec: LoadSpec): Promise<LoadResult>;
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The name of the Hydra row under a load's row. */
export const hydraRowName = (what: string) => `   peer: Hydra ${HYDRA_VERSION} ${what}`;

/** Row 1 (refresh grant with rotation) or row 3 (user info) against Hydra: its result, or why not. */
export async function hydraLoad(kind: 'refresh' | 'userinfo', ctx: HydraLoadContext): Promise<LoadResult | string> {
  const binary = await hydraBinary();
  if ('skip' in binary) return `skipped: ${binary.skip}`;
  let peer;
  try {
    peer = await startHydra(binary.bin, ctx.pgAdminUrl, kind === 'refresh' ? ctx.connections : 0);
  } catch (err) {
    const reason = (err as Error).message.split('\n')[0];
    console.error(`Hydra did not start: ${(err as Error).message}`);
    return `skipped: Hydra ${HYDRA_VERSION} did not start (${reason})`;
  }
  const common = { connections: ctx.connections, durationSeconds: ctx.durationSeconds };
  try {
    return kind === 'refresh'
      ? await ctx.load({ kind: 'refresh', ...common, url: peer.tokenUrl, authorization: basic(peer.clientId, peer.clientSecret), refreshTokens: peer.refreshTokens })
      : await ctx.load({ kind: 'fixed', ...common, url: peer.userinfoUrl, method: 'GET', headers: { authorization: `Bearer ${peer.accessToken}` } });
  } finally {
    await peer.stop();
  }
}
