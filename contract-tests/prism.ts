import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Starts `prism mock openapi.yaml` and resolves once it answers. */
export async function startPrism(port: number, options: { quiet?: boolean } = {}): Promise<ChildProcess> {
  const prism = spawn(
    process.execPath,
    [
      'node_modules/@stoplight/prism-cli/dist/index.js',
      'mock',
      'openapi.yaml',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: root, stdio: options.quiet ? 'ignore' : 'inherit' },
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (prism.exitCode !== null) throw new Error(`prism exited with code ${prism.exitCode}`);
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`);
      return prism;
    } catch {
      if (Date.now() > deadline) {
        prism.kill();
        throw new Error('prism did not start within 60 s');
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
