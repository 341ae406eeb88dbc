// The bench's own MariaDB: the system's mariadbd with the same configuration as scripts/mariadb.sh
// (the distribution's /etc/mysql, default durability: innodb_flush_log_at_trx_commit=1), on a
// fresh data directory and a free port. Its own, so the counters the bench reads (bench/probes.ts)
// and the fsyncs it waits for are the service's alone, not those of tests running meanwhile on the
// shared server of scripts/mariadb.sh.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../test/support/processes.ts';

export interface MariaDb {
  /** mysql://app:app@127.0.0.1:PORT/ (no database). */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
}

export async function startMariaDb(): Promise<MariaDb> {
  // scripts/mariadb.sh installs the server when it is missing (and starts the shared one).
  if (spawnSync('sh', ['-c', 'command -v mariadbd']).status !== 0) run('sh', ['scripts/mariadb.sh']);
  const dir = await mkdtemp(path.join(tmpdir(), 'oa-bench-mariadb-'));
  await chmod(dir, 0o755);
  const data = path.join(dir, 'data');
  await mkdir(data);
  const { uid, gid } = mysqlUser();
  await chown(data, uid, gid);
  await chown(dir, uid, gid);
  run('mariadb-install-db', ['--user=mysql', `--datadir=${data}`, '--auth-root-authentication-method=socket']);
  const port = await freePort();
  const socket = path.join(dir, 'mariadbd.sock');
  const child = spawn(
    'mariadbd',
    [
      '--user=mysql',
      `--datadir=${data}`,
      `--socket=${socket}`,
      `--port=${port}`,
      `--pid-file=${path.join(dir, 'mariadbd.pid')}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      '--max-connections=500',
      '--character-set-server=utf8mb4',
      `--log-error=${path.join(dir, 'error.log')}`,
    ],
    { stdio: 'ignore' },
  );
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; spawnSync('mariadb-admin', [`--socket=${socket}`, 'ping']).status !== 0; i += 1) {
    if (i > 120 || child.exitCode !== null) {
      await stop();
      throw new Error(`the bench's mariadbd did not start (see ${dir}/error.log)`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  run('mariadb', [
    `--socket=${socket}`,
    '-e',
    "CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app'; GRANT ALL ON *.* TO 'app'@'127.0.0.1';",
  ]);
  return { url: `mysql://app:app@127.0.0.1:${port}/`, pid: child.pid!, stop };
}

function mysqlUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'mysql'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}
