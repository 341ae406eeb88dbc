import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { removeEmbeddedPostgresData, startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { freePort } from './processes.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres:// URL of the maintenance database of the run's one embedded PostgreSQL. */
    pgAdminUrl: string;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Data left by test runs that were killed before their teardown (their pid is gone). */
async function removeStaleClusters(): Promise<void> {
  const entries = await readdir(path.resolve('.data')).catch(() => [] as string[]);
  for (const entry of entries) {
    const pid = Number(/^test-pg-(\d+)$/.exec(entry)?.[1]);
    if (!pid || alive(pid)) continue;
    await removeEmbeddedPostgresData(path.resolve('.data', entry, 'pg'));
    await rm(path.resolve('.data', entry), { recursive: true, force: true });
  }
}

/** Starts ONE throw-away embedded PostgreSQL for the whole test run; test/support/db.ts makes a database per suite on it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await removeStaleClusters();
  const root = path.resolve('.data', `test-pg-${process.pid}`);
  await mkdir(root, { recursive: true, mode: 0o755 });
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(root, 'pg'),
    port: await freePort(),
    database: 'postgres',
    persistent: false,
  });
  project.provide('pgAdminUrl', pg.adminUrl);
  process.env.TEST_PG_URL = pg.adminUrl;
  return async () => {
    await pg.stop();
    await rm(root, { recursive: true, force: true });
  };
}
