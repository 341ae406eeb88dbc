// A real worker process (`src/worker.ts`, as `npm run worker` starts it) for the fault tests, to
// kill or stop as an operator's machine would.
import { spawn, type ChildProcess } from 'node:child_process';
import { TEST_SECRETS_KEY } from '../../support/secrets.ts';
import { waitFor } from './fixtures.ts';

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) once the process is gone. */
  exited: Promise<number | null>;
}

/** Starts a worker with `env` (DATABASE_URL, QUEUE_URL, the model provider) and waits for its start line. */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  let text = '';
  const { BASE_URL: _vite, ...inherited } = process.env; // vitest sets BASE_URL=/ for Vite
  const child = spawn('sh', ['scripts/node.sh', 'src/worker.ts'], {
    env: { ...inherited, NODE_ENV: 'test', LOG_LEVEL: 'info', SECRETS_KEY: TEST_SECRETS_KEY, ...env },
  });
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitFor(`the worker's start\n${text}`, async () => {
    if (child.exitCode !== null) throw new Error(`the worker exited with ${child.exitCode}:\n${text}`);
    return text.includes('worker started');
  });
  return { child, output: () => text, exited };
}
