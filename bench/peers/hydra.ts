// Ory Hydra v2.3.0 (bench/hydra/), fresh per load as the oidc-provider peer, on PostgreSQL (MariaDB
// 10.11 fails its migrations): an embedded PostgreSQL cluster of its own, started at its first load
// of a run and stopped with the run, so its database's CPU is told apart from our queue's.
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { freePort } from '../../test/support/processes.ts';
import { HYDRA_VERSION, shortReason } from '../hydra/config.ts';
import { hydraBinary, migratedDatabase, startHydra } from '../hydra/peer.ts';
import { onCleanup } from '../processes.ts';
import { peerInstance, type OAuthPeer, type OAuthPeerInstance } from './types.ts';

interface Cluster {
  /** Hydra's DSN, migrated. */
  dsn: string;
  /** The postmaster: its backends serve Hydra's queries. */
  pid: number;
}

let cluster: Promise<Cluster> | undefined;

async function startCluster(bin: string): Promise<Cluster> {
  const dir = await mkdtemp(path.join(tmpdir(), 'oa-bench-hydra-pg-'));
  await chmod(dir, 0o755); // the cluster runs as its own OS user when we are root
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'pg');
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'postgres', persistent: false });
  onCleanup(async () => {
    cluster = undefined;
    await pg.stop();
  });
  const pid = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  return { dsn: await migratedDatabase(bin, pg.adminUrl), pid };
}

async function start(connections: number): Promise<OAuthPeerInstance | string> {
  const binary = await hydraBinary();
  if ('skip' in binary) return `skipped: ${binary.skip}`;
  try {
    cluster ??= startCluster(binary.bin);
    const { dsn, pid } = await cluster;
    const hydra = await startHydra(binary.bin, dsn, connections);
    return peerInstance(hydra, [hydra.pid, pid], () => hydra.stop());
  } catch (err) {
    console.error(`Hydra ${HYDRA_VERSION} did not start: ${(err as Error).message}`);
    return `skipped: Hydra ${HYDRA_VERSION} did not start (${shortReason((err as Error).message)})`;
  }
}

export const hydra: OAuthPeer = {
  name: `Hydra ${HYDRA_VERSION} (PostgreSQL)`,
  targets: { refresh: '≥ 8x', userinfo: '≥ 8x' },
  start,
};
